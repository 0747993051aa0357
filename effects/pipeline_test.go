package effects

import (
	"errors"
	"testing"
	"time"
)

func TestCheckNowDefersStoreQuestionsOnlyWhileASettlementIsInFlight(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	every := 5 * time.Second
	cases := []struct {
		name     string
		settling bool
		last     time.Time
		now      time.Time
		want     bool
	}{
		{"no settlement in flight asks", false, t0, t0.Add(time.Millisecond), true},
		{"never asked yet asks", true, time.Time{}, t0, true},
		{"settlement in flight, asked recently, defers", true, t0, t0.Add(every - time.Millisecond), false},
		{"settlement in flight, asked every ago, asks", true, t0, t0.Add(every), true},
	}
	for _, c := range cases {
		if got := checkNow(c.settling, c.last, c.now, every); got != c.want {
			t.Errorf("%s: checkNow = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestAgainPipelinesAnySentBatchButNeverAFailedOrEmptyOne(t *testing.T) {
	failed := errors.New("nothing written")
	cases := []struct {
		name      string
		pipelined bool
		claimed   int
		derr      error
		want      bool
	}{
		{"full batch", true, 100, nil, true},
		{"partial batch: effects committed meanwhile are claimable", true, 7, nil, true},
		{"nothing claimed waits for a wake-up", true, 0, nil, false},
		{"a dispatch that wrote nothing settles first", true, 100, failed, false},
		{"Pass settles before returning", false, 100, nil, false},
	}
	for _, c := range cases {
		if got := again(c.pipelined, c.claimed, 100, c.derr); got != c.want {
			t.Errorf("%s: again = %v, want %v", c.name, got, c.want)
		}
	}
}
