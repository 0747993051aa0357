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

// Enough is the one decision of "enough records to seal": zero asks for
// DefaultMinBatch, 1 for any record, and no span wraps past 2^64.
func TestEnough(t *testing.T) {
	const max = ^uint64(0)
	cases := []struct {
		name        string
		first, last uint64
		n           uint64
		want        bool
	}{
		{"none", 5, 4, 1, false},
		{"one record, any number", 5, 5, 1, true},
		{"zero is the default batch: one short", 1, DefaultMinBatch - 1, 0, false},
		{"zero is the default batch: reached", 1, DefaultMinBatch, 0, true},
		{"exactly the minimum", 11, 30, 20, true},
		{"one short of the minimum", 11, 29, 20, false},
		{"the whole range", 1, max, max, true},
		{"from zero, no wrap", 0, max, 2, true},
	}
	for _, c := range cases {
		if got := Enough(c.first, c.last, c.n); got != c.want {
			t.Errorf("%s: Enough(%d, %d, %d) = %v, want %v", c.name, c.first, c.last, c.n, got, c.want)
		}
	}
	if MinBatch(0) != DefaultMinBatch || MinBatch(1) != 1 || (Policy{}).Batch() != DefaultMinBatch {
		t.Fatalf("MinBatch(0) = %d, MinBatch(1) = %d, Policy{}.Batch() = %d", MinBatch(0), MinBatch(1), (Policy{}).Batch())
	}
}

// A policy with no MinBatch waits for DefaultMinBatch records, as a seal
// asked for a minimum of 0 does (Enough).
func TestPointWithNoMinBatchWaitsForTheDefault(t *testing.T) {
	p := Policy{KeepRecords: 1}
	short := State{Unsealed: 1, Head: DefaultMinBatch, Applied: DefaultMinBatch}
	due := State{Unsealed: 1, Head: DefaultMinBatch + 1, Applied: DefaultMinBatch + 1}
	if got := p.Point(short); got != 0 {
		t.Fatalf("Point with %d records that may go = %d, want 0", DefaultMinBatch-1, got)
	}
	if got := p.Point(due); got != DefaultMinBatch+1 {
		t.Fatalf("Point with %d records that may go = %d, want %d", DefaultMinBatch, got, DefaultMinBatch+1)
	}
}
