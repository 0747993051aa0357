package effects_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
)

// fullDiskOutbox refuses the start's commits (RecoverProcessing,
// QueueUnsynced) the first fails times each, as a store on a full disk
// does (log_write_failed wrapping ENOSPC).
type fullDiskOutbox struct {
	effects.Outbox
	fails     int64
	recovered atomic.Int64
	queued    atomic.Int64
}

var errFull = fmt.Errorf("log_write_failed: nothing was committed: %w", syscall.ENOSPC)

func (o *fullDiskOutbox) RecoverProcessing(spreadsheet string, at time.Time) (int, error) {
	if o.recovered.Add(1) <= o.fails {
		return 0, errFull
	}
	return o.Outbox.RecoverProcessing(spreadsheet, at)
}

func (o *fullDiskOutbox) QueueUnsynced(spreadsheet string, max int) (int, error) {
	if o.queued.Add(1) <= o.fails {
		return 0, errFull
	}
	return o.Outbox.QueueUnsynced(spreadsheet, max)
}

// F6 / issue 29 item 4: a dispatcher that starts while the disk is full
// (its first commits refused) does not stop sync for good: it tries again
// with a backoff and, once the disk has room, dispatches as usual. Only
// displacement ends it.
func TestF6_DispatcherStartOnAFullDiskRetriesAndRecovers(t *testing.T) {
	r := newRig(t)
	r.commit("LAX", airport("Los Angeles", 125))
	ob := &fullDiskOutbox{Outbox: r.ob, fails: 3}
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: r.prov, Workbook: r.wb, Outbox: ob,
		Clock: events.SystemClock{}, Interval: 5 * time.Millisecond, AuthorityTTL: testTTL, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	must(t, disp.ClaimAuthority(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- disp.Run(ctx) }()
	deadline := time.Now().Add(20 * time.Second)
	for len(r.rows("Airport_System")) < 2 {
		select {
		case err := <-done:
			t.Fatalf("the dispatcher stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the row was never dispatched (start tried %d times)", ob.recovered.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if ob.recovered.Load() <= ob.fails || ob.queued.Load() <= ob.fails {
		t.Fatalf("tries: recover %d, queue %d", ob.recovered.Load(), ob.queued.Load())
	}
}
