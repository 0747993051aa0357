package replaytest

import (
	"math"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// The committed airports log, written by a build before the chain and
// before sealing, opens with a retention policy and seals in the
// background; the chain verifies from the genesis value across the
// segment, the old head still pinned, and the replay reaches the head.
func TestI38_TheCommittedAirportsLogTakesARetentionPolicy(t *testing.T) {
	dir := copyStore(t, "airports")
	before, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{})
	must(t, err)
	pin := hikoutei.ChainPin{Seq: before.Head, Hash: before.HeadHash}
	opts := hikoutei.Options{HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true,
		Retention: hikoutei.Retention{KeepRecords: 10, MinBatch: 10}}
	s, err := hikoutei.Open(t.Context(), dir, opts, airportDef())
	must(t, err)
	deadline := time.After(time.Minute)
	for {
		bell := engine.Of(s).RetentionBell()
		if r := s.Health().RetentionStatus; r.Seals > 0 || r.Failures > 0 {
			break
		}
		select {
		case <-deadline:
			t.Fatalf("no seal of the old log: %+v", s.Health().RetentionStatus)
		case <-bell:
		}
	}
	h := s.Health()
	segs, err := s.Segments()
	must(t, err)
	must(t, s.Close())
	if h.Retention != nil || len(segs) != 1 || segs[0].First != 1 || segs[0].Last+10 > before.Head+2 {
		t.Fatalf("retention on the old log: %+v, %v, segments %+v (old head %d)", h.RetentionStatus, h.Retention, segs, before.Head)
	}
	after, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{Pin: &pin})
	must(t, err)
	if !after.Pinned || after.Records != after.Head {
		t.Fatalf("verify from the genesis value after the seal: %+v", after)
	}
	if _, cp := replayed(t, dir); cp != after.Head {
		t.Fatalf("the sealed old log replays to %d, its head is %d", cp, after.Head)
	}
}

// The committed airports log, written by a build before sealing, takes
// a seal with a minimum batch: fewer records than the batch below the
// point seal nothing (Skipped, naming them, no segment written); a whole
// batch seals; run again at once, the few records since (the seal's own
// event, kept in log.db) seal nothing, where a seal without the minimum
// made a segment of them. The log verifies from the genesis value.
func TestI38_TheCommittedAirportsLogSealsOnlyAWholeBatch(t *testing.T) {
	dir := copyStore(t, "airports")
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true}, airportDef())
	must(t, err)
	defer s.Close()
	head, err := s.ChainHead()
	must(t, err)
	all := hikoutei.SealOptions{Below: math.MaxUint64}
	big, batch := all, all
	big.MinBatch, batch.MinBatch = head.Seq+1, 10
	rep, err := s.Seal(t.Context(), big)
	must(t, err)
	if segs, _ := s.Segments(); !rep.Skipped || rep.First != 1 || rep.Last != head.Seq || rep.Segment != "" || len(segs) != 0 {
		t.Fatalf("a seal of fewer records than its batch: %+v, segments %v (head %d)", rep, segs, head.Seq)
	}
	if rep, err = s.Seal(t.Context(), batch); err != nil || rep.Skipped || rep.First != 1 || rep.Last != head.Seq {
		t.Fatalf("a seal of a whole batch: %+v, %v (head %d)", rep, err, head.Seq)
	}
	sealed := rep.Last
	if rep, err = s.Seal(t.Context(), batch); err != nil || !rep.Skipped || rep.First != sealed+1 || rep.Last < rep.First {
		t.Fatalf("the same seal again at once: %+v, %v; want nothing sealed, naming the records since seq %d", rep, err, sealed)
	}
	if segs, err := s.Segments(); err != nil || len(segs) != 1 {
		t.Fatalf("segments after a seal and a skipped one: %v, %v", segs, err)
	}
	must(t, s.Close())
	if _, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{}); err != nil {
		t.Fatalf("verify after the seals: %v", err)
	}
}
