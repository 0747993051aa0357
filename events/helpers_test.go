package events

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// openTestLog opens a fresh log in a temp dir on a manual clock.
func openTestLog(t *testing.T) (*Log, *ManualClock) {
	t.Helper()
	clock := NewManualClock(t0)
	l, err := OpenLog(filepath.Join(t.TempDir(), LogFileName), Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, clock
}

// acquire takes the default role's lease for writer id.
func acquire(t *testing.T, l *Log, id string) Lease {
	t.Helper()
	lease, err := l.AcquireLease(AcquireRequest{WriterID: id, Operation: "test"})
	if err != nil {
		t.Fatalf("acquire %s: %v", id, err)
	}
	return lease
}

// unit is one unit appending n events to stream (each a sync.diverged
// whose target counts them and whose reason is "Café").
func unit(stream string, expected uint64, n int) Unit {
	evs := make([]Event, n)
	for i := range evs {
		evs[i] = Event{Payload: note(i)}
	}
	return Unit{Streams: []StreamAppend{{Stream: stream, ExpectedVersion: expected, Events: evs}}}
}

func note(i int) SyncDiverged { return SyncDiverged{Target: fmt.Sprint(i), Reason: "Café"} }

func readAll(t *testing.T, l *Log, from uint64) []Event {
	t.Helper()
	var out []Event
	if err := l.ReadFrom(from, func(e Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}
