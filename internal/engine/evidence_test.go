package engine_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// racingInbound is the engine's inbound side with a hook run between a
// pass's sheet reads and its decision: the dispatcher applies rows after
// the poll read the tab and before the poll decides on it.
type racingInbound struct {
	effects.Inbound
	between func()
}

func (r racingInbound) Observe(base uint64, tabs map[string]effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	r.between()
	return r.Inbound.Observe(base, tabs, full)
}

// hungWrite starts a dispatcher pass whose sheet write is applied but not
// answered until release is closed: the pass's effects are claimed and
// written, never yet applied in the store. It returns the pass's outcome.
func (x *synced) hungWrite(release chan struct{}) <-chan error {
	x.t.Helper()
	x.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThenHang, Match: emulator.MatchWrites, Release: release})
	done := make(chan error, 1)
	go func() { _, err := x.disp.Pass(context.Background()); done <- err }()
	for deadline := time.Now().Add(10 * time.Second); x.emu.PendingFaults() != 0; {
		if time.Now().After(deadline) {
			x.t.Fatal("the dispatcher never reached its write")
		}
		select {
		case err := <-done:
			x.t.Fatalf("pass ended before its write: %v", err)
		case <-time.After(time.Millisecond):
		}
	}
	return done
}

// rowDeleted counts the row_deleted records appended after seq.
func (x *synced) rowDeleted(after uint64) int {
	x.t.Helper()
	n := 0
	mustT(x.t, x.e.Log().ReadFrom(after+1, func(e events.Event) error {
		if r, ok := e.Payload.(events.ObservationRejected); ok && r.Reason == aggregates.ReasonRowDeleted {
			n++
		}
		return nil
	}))
	return n
}

// TestNoFalseEvidenceABackfillRacingPollsRecordsNoRowDeletedAndKDeletionsRecordK
// backfills N rows in batches while polls and full scans interleave with
// every batch deterministically: each poll reads the tab while a batch is
// claimed and written but not applied (its rows show, unexpected), and
// the next batch is written and applied after the read, before the
// decision. Not one row_deleted is recorded; a person then deleting k
// rows records exactly k.
func TestNoFalseEvidenceABackfillRacingPollsRecordsNoRowDeletedAndKDeletionsRecordK(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil, func(so *hikoutei.SyncOptions) { so.MaxBatch = 8 })
	start := x.head()
	u := x.Begin()
	for i := 1; i <= 60; i++ {
		mustT(t, u.Persist(&Part{ID: strconv.Itoa(i), Name: "part " + strconv.Itoa(i), SKU: fmt.Sprintf("%05d", i), Qty: int64(i)}))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
	var release chan struct{}
	var hung <-chan error
	settle := func() { // the hung batch is applied, after the read
		if release != nil {
			close(release)
			mustT(t, <-hung)
			release = nil
		}
	}
	raced := 0
	between := func() { // ... and the next batch written and applied, after the read too
		settle()
		x.pass()
		raced++
	}
	poller, err := effects.NewPoller(effects.PollerConfig{Provider: x.prov, Workbook: x.wb, Inbound: racingInbound{x.e, between},
		Tabs: []string{partInput}, Clock: x.clock, Logger: quiet})
	mustT(t, err)
	for round := 0; x.unsettled() > 0; round++ {
		release = make(chan struct{})
		hung = x.hungWrite(release)
		pass := poller.Poll
		if round%3 == 2 {
			pass = poller.FullScan
		}
		if _, err := pass(ctx); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		settle()
		x.clock.Advance(time.Second)
	}
	if raced < 3 {
		t.Fatalf("only %d polls decided after a batch was applied behind their read", raced)
	}
	x.drain()
	if got := x.rowDeleted(start); got != 0 || len(x.quarantine(partInput)) != 0 {
		t.Fatalf("backfill recorded %d row_deleted; active evidence %v", got, x.quarantine(partInput))
	}
	if r := x.poll(); r.Certified != 1 {
		t.Fatalf("after the backfill the tab is not certified: %+v", r)
	}
	const k = 3
	before := x.head()
	for _, a := range []string{"7", "21", "58"} {
		mustT(t, x.sheet.Person().DeleteRows(partInput, x.rowNumber(a), 1))
	}
	x.poll()
	x.fullScan()
	x.poll()
	if got, q := x.rowDeleted(before), x.quarantine(partInput); got != k || len(q) != k {
		t.Fatalf("%d rows deleted by a person: %d row_deleted recorded, active %v", k, got, q)
	}
}
