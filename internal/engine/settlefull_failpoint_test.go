//go:build failpoints

package engine_test

import (
	"errors"
	"fmt"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// The disk fills while a dispatch's effects are settled: the batch
// landed on the sheet but its settlement cannot be committed
// (log.before_commit=enospc on the pass's second commit). The pass says
// so (log_write_failed), Health names it, no acknowledged commit is
// lost, and once space is back the same running dispatcher settles the
// landed effects (without a restart) and every row is shown once.
func TestADiskFullWhileSettlingLosesNothingAndRecoversWithoutARestart(t *testing.T) {
	x := openSynced(t, t.TempDir())
	for i := range 3 {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("d%d", i), Name: "before"})
	}
	x.drain()
	for i := 3; i < 6; i++ {
		commit(t, x.Store, &Airport{ID: fmt.Sprintf("d%d", i), Name: "acknowledged"})
	}
	mustT(t, failpoint.Enable(failpoint.LogBeforeCommit+"=enospc@2"))
	_, err := x.h.Dispatch(ctx)
	fired := failpoint.Hits(failpoint.LogBeforeCommit) >= 2
	failpoint.Disable()
	if !fired || !errors.Is(err, hikoutei.ErrLogWrite) {
		t.Fatalf("the pass whose settlement met a full disk: %v (fired %v), want log_write_failed", err, fired)
	}
	if c := x.outbox(); c[aggregates.EffectProcessing] == 0 {
		t.Fatalf("outbox after the refused settlement: %v, want the landed effects still processing", c)
	}
	wantRowsOnce(t, x.sheet, "Airport_System", 6) // the batch landed
	// The disk is still full at the next pass: it fails the same way and
	// claims nothing.
	mustT(t, failpoint.Enable(failpoint.LogBeforeCommit+"=enospc"))
	_, err = x.h.Dispatch(ctx)
	failpoint.Disable()
	if !errors.Is(err, hikoutei.ErrLogWrite) {
		t.Fatalf("the next pass with the disk still full: %v, want log_write_failed", err)
	}
	if h := x.Health(); !errors.Is(h.Local, hikoutei.ErrLogWrite) {
		t.Fatalf("Health.Local after the refused settlement: %v, want log_write_failed", h.Local)
	}
	x.drain()
	if c := x.outbox(); c[aggregates.EffectApplied] != 12 || x.unsettled() != 0 {
		t.Fatalf("outbox once space is back: %v", c)
	}
	wantRowsOnce(t, x.sheet, "Airport_System", 6)
	for i := range 6 {
		if a, err := hikoutei.Get[Airport](ctx, x.Store, fmt.Sprintf("d%d", i)); err != nil || a == nil {
			t.Errorf("acknowledged airport d%d: %v", i, err)
		}
	}
	if h := x.Health(); h.Local != nil || h.Sync != nil {
		t.Fatalf("health once space is back: local %v, sync %v", h.Local, h.Sync)
	}
}
