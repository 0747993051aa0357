//go:build failpoints

package engine_test

import (
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// An observation that dies between two of its turns (failpoint
// inbound.after_window) loses nothing: the windows before it are
// committed, and after a restart the next pass observes the rest; every
// edit is accepted exactly once.
func TestAnObservationInterruptedBetweenTwoTurnsLosesNoEdit(t *testing.T) {
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	x := openSyncedOn(t, dir, sheet, nil, parts)
	seedParts(t, x, 12)
	edits := []string{"2", "6", "11"} // one in each window of 4 rows
	for _, id := range edits {
		x.typeIn(id, "notes", "edited "+id)
	}
	mustT(t, x.e.ObserveInTurnsOf(4, nil))
	mustT(t, failpoint.Enable(failpoint.InboundAfterWindow+"=panic@2"))
	var crash *failpoint.Crash
	func() {
		defer failpoint.Disable()
		defer func() {
			if err, ok := recover().(error); ok {
				errors.As(err, &crash)
			}
		}()
		x.fullScan()
	}()
	if crash == nil {
		t.Fatal("the full scan was not interrupted at inbound.after_window")
	}
	if got := x.acceptedEdits(); len(got) != 2 || got["2"] != 1 || got["6"] != 1 {
		t.Fatalf("accepted before the interruption: %v, want parts 2 and 6 (the first two windows)", got)
	}
	mustT(t, x.Close())

	y := openSyncedOn(t, dir, restarted(t, sheet), x.clock, parts)
	mustT(t, y.e.ObserveInTurnsOf(4, nil))
	if r := y.fullScan(); r.Stats.Accepted != 1 || r.Stats.Quarantined != 0 || r.Stats.Deferred != 0 {
		t.Fatalf("full scan after the restart: %+v", r.Stats)
	}
	got := y.acceptedEdits()
	for _, id := range edits {
		if got[id] != 1 {
			t.Errorf("part %s's edit was accepted %d times, want once", id, got[id])
		}
		if p := y.part(id); p.Notes != "edited "+id {
			t.Errorf("part %s after the restart: %+v", id, p)
		}
	}
	if len(got) != len(edits) {
		t.Errorf("accepted %v, want parts %v once each", got, edits)
	}
}

// acceptedEdits counts the accepted observations of each anchor in the
// log.
func (x *synced) acceptedEdits() map[string]int {
	x.t.Helper()
	out := map[string]int{}
	mustT(x.t, x.e.Log().ReadFrom(1, func(e events.Event) error {
		if p, ok := e.Payload.(events.ObservationAccepted); ok {
			out[p.Anchor]++
		}
		return nil
	}))
	return out
}
