package effects

import (
	"errors"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
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

func TestAheadNowSendsBesideOnlyALongWriteWithTwoRequestsOfBudget(t *testing.T) {
	after := 300 * time.Millisecond
	cases := []struct {
		name     string
		out      time.Duration
		after    time.Duration
		headroom int
		want     bool
	}{
		{"a write out for less than after waits", after - time.Millisecond, after, 5, false},
		{"a long write with two requests of budget", after, after, 2, true},
		{"one request of budget: the next pass would wait for it", 2 * after, after, 1, false},
		{"no budget", 2 * after, after, 0, false},
		{"after not positive: never", time.Hour, -1, 5, false},
	}
	for _, c := range cases {
		if got := aheadNow(c.out, c.after, c.headroom); got != c.want {
			t.Errorf("%s: aheadNow = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNewRowsAreFirstSendsOfAppendsOnly(t *testing.T) {
	first := aggregates.Effect{Op: events.OpAppend, Attempts: 1, StreamSeq: 1}
	resent, later, update := first, first, first
	resent.Attempts, later.StreamSeq, update.Op = 2, 2, events.OpUpdate
	cases := []struct {
		name    string
		claimed []aggregates.Effect
		want    bool
	}{
		{"first sends of new rows", []aggregates.Effect{first, first}, true},
		{"a resend reads first", []aggregates.Effect{first, resent}, false},
		{"a row's later append reads first", []aggregates.Effect{later}, false},
		{"an update", []aggregates.Effect{first, update}, false},
		{"nothing", nil, false},
	}
	for _, c := range cases {
		if got := newRows(c.claimed); got != c.want {
			t.Errorf("%s: newRows = %v, want %v", c.name, got, c.want)
		}
	}
}
