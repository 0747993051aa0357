package engine_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// denyPurges makes x's stream one an earlier build created: purges
// denied (JetStream never lifts that).
func (x *replicated) denyPurges() {
	x.t.Helper()
	js, err := jetstream.New(x.cluster.Connect())
	mustT(x.t, err)
	c := ctxWithin(x.t, replicationtest.Deadline)
	s, err := js.Stream(c, x.stream.Stream())
	mustT(x.t, err)
	cfg := s.CachedInfo().Config
	cfg.DenyPurge = true
	_, err = js.UpdateStream(c, cfg)
	mustT(x.t, err)
}

func TestI38_AStreamOfAnEarlierBuildKeepsEveryCommitWhileItsHostsSeal(t *testing.T) {
	x := newReplicated(t)
	x.denyPurges()
	primary := x.mustOpen(t.TempDir(), false)
	commitAirports(t, primary, "A", 15)
	standby := x.mustOpen(t.TempDir(), true)
	sealKeeping(t, primary, 5)
	commitAirports(t, primary, "B", 10)
	second := sealKeeping(t, primary, 5)
	x.caughtUp(standby)
	sameSegments(t, primary, standby, segmentsOf(t, primary))
	for _, s := range []*hikoutei.Store{primary, standby} {
		exactlyOnce(t, s)
	}
	if f, _ := x.stream.First(ctxWithin(t, replicationtest.Deadline)); f != 1 {
		t.Fatalf("a stream that denies purges starts at %d", f)
	}
	h := primary.Health().Replication
	if !errors.Is(h.Purge, replication.ErrRejected) || h.SealedThrough != second.Last {
		t.Fatalf("primary's replication health %+v: want the denied purge said, sealed through %d", h, second.Last)
	}
	// A new host still gets everything from the stream.
	late := x.mustOpen(t.TempDir(), true)
	x.caughtUp(late)
	if got := segmentsOf(t, late); len(got) != 2 {
		t.Fatalf("a late standby on a stream that kept everything: %d segments, want 2", len(got))
	}
	exactlyOnce(t, late)
}

func TestI38_AReplicatedPrimaryRunsItsRetentionPolicyAndItsStandbySealsTheSame(t *testing.T) {
	x := newReplicated(t)
	o := x.options(false)
	o.Retention = hikoutei.Retention{KeepRecords: 5, MinBatch: 8}
	primary, err := hikoutei.Open(ctx, t.TempDir(), o, airports...)
	mustT(t, err)
	t.Cleanup(func() { primary.Close() })
	so := x.options(true)
	so.Retention = o.Retention
	standby, err := hikoutei.Open(ctx, t.TempDir(), so, airports...)
	mustT(t, err)
	t.Cleanup(func() { standby.Close() })
	if st := standby.Health().RetentionStatus; st.State != hikoutei.RetentionNotRunning || st.Reason == "" {
		t.Fatalf("a standby's retention: %+v, want not_running with the reason", st)
	}
	// One unit of twenty records: the writer rings the policy once for it,
	// so the primary seals once (a seal's own record leaves less than a
	// batch to seal) and both hosts end on the same segments.
	var unit []any
	for i := range 20 {
		a := airport(fmt.Sprintf("A%03d", i))
		unit = append(unit, &a)
	}
	commit(t, primary, unit...)
	eventually(t, "the primary's policy seals", func() bool { return primary.Health().RetentionStatus.Seals > 0 })
	if st := primary.Health().RetentionStatus; st.State != hikoutei.RetentionOn {
		t.Fatalf("a replicated primary's retention: %+v", st)
	}
	// The standby applies the primary's seal from the stream, after its
	// record.
	var segs []events.SegmentSealed
	eventually(t, "the standby holds the primary's segments", func() bool {
		segs = segmentsOf(t, primary)
		return len(segs) > 0 && slices.Equal(segmentsOf(t, standby), segs)
	})
	sameSegments(t, primary, standby, segs)
	exactlyOnce(t, standby)
}
