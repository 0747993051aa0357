//go:build failpoints

package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

func TestI38_APurgeACrashSkippedAfterAReplicatedSealIsRedoneWhenThePrimaryOpens(t *testing.T) {
	x := newReplicated(t)
	dir := t.TempDir()
	primary := x.mustOpen(dir, false)
	commitAirports(t, primary, "A", 15)
	sealKeeping(t, primary, 5)
	commitAirports(t, primary, "B", 10)
	mustT(t, failpoint.Enable(failpoint.ReplicationBeforePurge+"=eio"))
	second := sealKeeping(t, primary, 5)
	failpoint.Disable()
	sctx := ctxWithin(t, replicationtest.Deadline)
	if f, _ := x.stream.First(sctx); f != 1 {
		t.Fatalf("the purge was skipped, yet the stream starts at %d", f)
	}
	if h := primary.Health().Replication; h.Purge == nil {
		t.Fatalf("a skipped purge is not in the health: %+v", h)
	}
	mustT(t, primary.Close())
	reopened := x.mustOpen(dir, false)
	keep, _, err := x.stream.CommitOf(sctx, second.First)
	mustT(t, err)
	if f, _ := x.stream.First(sctx); f != keep {
		t.Fatalf("after the reopen the stream starts at %d, want %d", f, keep)
	}
	if h := reopened.Health().Replication; h.Purge != nil || h.StreamFirst != keep {
		t.Fatalf("reopened primary's replication health %+v", h)
	}
	commitAirports(t, reopened, "C", 2)
	exactlyOnce(t, reopened)
}
