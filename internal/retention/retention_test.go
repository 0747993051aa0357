package retention

import (
	"testing"
	"time"
)

func TestPoint(t *testing.T) {
	base := State{Unsealed: 1, Head: 1000, Applied: 1000, Young: 1001}
	with := func(f func(*State)) State { s := base; f(&s); return s }
	cases := []struct {
		name string
		p    Policy
		s    State
		want uint64
	}{
		{"off: never seals", Policy{}, base, 0},
		{"off with a min batch only", Policy{MinBatch: 1}, base, 0},
		{"keep records", Policy{KeepRecords: 100, MinBatch: 10}, base, 901},
		{"keep more than the log holds", Policy{KeepRecords: 2000, MinBatch: 1}, base, 0},
		{"keep records, batch not reached", Policy{KeepRecords: 100, MinBatch: 901}, base, 0},
		{"keep records, batch just reached", Policy{KeepRecords: 100, MinBatch: 900}, base, 901},
		{"keep records after a seal", Policy{KeepRecords: 100, MinBatch: 10}, with(func(s *State) { s.Unsealed = 895 }), 0},
		{"keep records after a seal, batch due", Policy{KeepRecords: 100, MinBatch: 5}, with(func(s *State) { s.Unsealed = 895 }), 901},
		{"default batch", Policy{KeepRecords: 100}, base, 0},
		{"default batch reached", Policy{KeepRecords: 100}, with(func(s *State) { s.Head, s.Applied, s.Young = 20_000, 20_000, 20_001 }), 19_901},
		{"age: young from 501", Policy{MaxAge: time.Hour, MinBatch: 10}, with(func(s *State) { s.Young = 501 }), 501},
		{"age: every record young", Policy{MaxAge: time.Hour, MinBatch: 1}, with(func(s *State) { s.Young = 1 }), 0},
		{"age: every record old", Policy{MaxAge: time.Hour, MinBatch: 1}, base, 1001},
		{"age and count: the one keeping more wins", Policy{MaxAge: time.Hour, KeepRecords: 100, MinBatch: 1}, with(func(s *State) { s.Young = 501 }), 501},
		{"count and age: the one keeping more wins", Policy{MaxAge: time.Hour, KeepRecords: 700, MinBatch: 1}, with(func(s *State) { s.Young = 501 }), 301},
		{"below snapshot", Policy{BelowSnapshot: true, MinBatch: 1}, with(func(s *State) { s.Snapshot = 600 }), 601},
		{"below snapshot, none taken", Policy{BelowSnapshot: true, MinBatch: 1}, base, 0},
		{"read model behind keeps what it did not apply", Policy{KeepRecords: 1, MinBatch: 1}, with(func(s *State) { s.Applied = 400 }), 401},
		{"snapshot and age", Policy{BelowSnapshot: true, MaxAge: time.Minute, MinBatch: 1}, with(func(s *State) { s.Snapshot, s.Young = 600, 300 }), 300},
		{"everything sealed already", Policy{KeepRecords: 1, MinBatch: 1}, with(func(s *State) { s.Unsealed = 1000 }), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.p.Point(c.s); got != c.want {
				t.Fatalf("Point(%+v) = %d, want %d", c.s, got, c.want)
			}
		})
	}
}

func TestCutoff(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		p    Policy
		want time.Time
	}{
		{"no age rule", Policy{KeepRecords: 5}, time.Time{}},
		{"a day", Policy{MaxAge: 24 * time.Hour}, now.Add(-24 * time.Hour)},
		{"negative is unset", Policy{MaxAge: -time.Hour}, time.Time{}},
	}
	for _, c := range cases {
		if got := c.p.Cutoff(now); !got.Equal(c.want) {
			t.Errorf("%s: Cutoff = %v, want %v", c.name, got, c.want)
		}
	}
}
