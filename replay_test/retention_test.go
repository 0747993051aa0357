package replaytest

import (
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
