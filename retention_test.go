package hikoutei

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// waitRetention waits, woken by each seal outcome the store records,
// until cond holds of its retention health (failing after a minute).
func waitRetention(t testing.TB, s *Store, what string, cond func(Health) bool) Health {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		bell := s.e.RetentionBell()
		if h := s.Health(); cond(h) {
			return h
		}
		select {
		case <-bell:
		case <-deadline:
			t.Fatalf("retention never reached %s: %+v (%v)", what, s.Health().RetentionStatus, s.Health().Retention)
		}
	}
}

func sealed(h Health) bool { return h.RetentionStatus != nil && h.RetentionStatus.Seals > 0 }

func headOf(t testing.TB, s *Store) uint64 {
	t.Helper()
	st, err := s.Stats(ctx)
	mustT(t, err)
	return st.LogHead
}

func TestRetentionOffByDefaultNeverSeals(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	loadAirports(t, s, 600)
	h := s.Health()
	if h.RetentionStatus == nil || h.RetentionStatus.State != RetentionOff || h.Retention != nil {
		t.Fatalf("retention without a policy: %+v, %v", h.RetentionStatus, h.Retention)
	}
	segs, err := s.Segments()
	mustT(t, err)
	if len(segs) != 0 || s.e.RetentionBell() != nil {
		t.Fatalf("a store without a policy sealed %d segments", len(segs))
	}
}

func TestI38_RetentionByCountSealsInTheBackgroundAndTheChainVerifies(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, func(o *Options) { o.Retention = Retention{KeepRecords: 100, MinBatch: 50} })
	before := eventsFromStore(t, s, 600)
	h := waitRetention(t, s, "a seal", sealed)
	head := headOf(t, s)
	r := h.RetentionStatus
	if r.State != RetentionOn || h.Retention != nil || r.SealedBelow == 0 || head-r.SealedBelow+1 < 100 || r.LastSealAt.IsZero() {
		t.Fatalf("after loading %d events with 100 kept: %+v (head %d)", len(before), r, head)
	}
	got := eventsFrom(t, s, 1)
	for i := range before {
		if got[i].Seq != before[i].Seq || got[i].Commit != before[i].Commit || got[i].Type() != before[i].Type() {
			t.Fatalf("event %d differs after the seal", before[i].Seq)
		}
	}
	mustT(t, s.Close()) // the retainer stops with the store: what it sealed is final
	s = openStore(t, dir)
	segs, err := s.Segments()
	mustT(t, err)
	head = headOf(t, s)
	mustT(t, s.Close())
	if len(segs) == 0 || segs[len(segs)-1].Last+1 < r.SealedBelow || head-segs[len(segs)-1].Last < 100 {
		t.Fatalf("segments %+v, retention sealed below %d, head %d: fewer than 100 records kept", segs, r.SealedBelow, head)
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].First != segs[i-1].Last+1 {
			t.Fatalf("segments %d and %d are not contiguous: %+v", i-1, i, segs)
		}
	}
	vr, err := VerifyDir(ctx, dir, VerifyOptions{})
	mustT(t, err)
	if vr.Head < head {
		t.Fatalf("verify from genesis: %+v", vr)
	}
}

// eventsFromStore loads n airports into s and returns the log's events.
func eventsFromStore(t *testing.T, s *Store, n int) []Event {
	t.Helper()
	loadAirports(t, s, n)
	return eventsFrom(t, s, 1)
}

func TestRetentionByAgeDecidesOnTheStoreClockNotTheWallClock(t *testing.T) {
	dir := t.TempDir()
	clock := events.NewManualClock(t0) // two days before this test's wall clock, at least
	s := openStore(t, dir, func(o *Options) {
		o.Clock, o.Retention, o.LeaseTTL = clock, Retention{MaxAge: time.Hour, MinBatch: 10}, 24*time.Hour
	})
	defer s.Close()
	loadAirports(t, s, 300)
	clock.Advance(2 * time.Hour)
	young := headOf(t, s) + 1
	ap := readAirports(t)
	for i := 300; i < 340; i++ {
		commit(t, s, &ap[i])
	}
	h := waitRetention(t, s, "a seal", sealed)
	if r := h.RetentionStatus; r.SealedBelow != young || !r.LastSealAt.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("sealed below %d at %v, want below %d (the first record of the store's last hour) at %v",
			r.SealedBelow, r.LastSealAt, young, t0.Add(2*time.Hour))
	}
	for _, e := range eventsFrom(t, s, young) {
		if e.At.Before(t0.Add(time.Hour)) && e.Stream != events.SegmentStream {
			t.Fatalf("record %d of %v is older than an hour on the store's clock and still in log.db", e.Seq, e.At)
		}
	}
}

func TestRetentionFailureIsVisibleThenClears(t *testing.T) {
	dir := t.TempDir()
	mustT(t, openStore(t, dir).Close())
	blocker := filepath.Join(dir, events.SegmentsDir)
	mustT(t, os.WriteFile(blocker, []byte("not a folder"), 0o600))
	s := openStore(t, dir, func(o *Options) { o.Retention = Retention{KeepRecords: 10, MinBatch: 10} })
	defer s.Close()
	loadAirports(t, s, 250)
	h := waitRetention(t, s, "a failure", func(h Health) bool { return h.RetentionStatus.Failures > 0 })
	if r := h.RetentionStatus; r.State != RetentionFailing || !errors.Is(h.Retention, ErrRetentionFailing) ||
		ErrorCode(h.Retention) != "retention_failing" || r.FailingSince.IsZero() || r.Seals != 0 {
		t.Fatalf("a seal that cannot write its segment: %+v, %v", r, h.Retention)
	}
	if segs, _ := s.Segments(); len(segs) != 0 {
		t.Fatalf("a failed seal recorded %d segments", len(segs))
	}
	mustT(t, os.Remove(blocker))
	ap := readAirports(t)
	commit(t, s, &ap[260], &ap[261], &ap[262], &ap[263]) // a quarter of a batch rings the retainer again
	h = waitRetention(t, s, "a seal after the failure", sealed)
	if r := h.RetentionStatus; r.State != RetentionOn || h.Retention != nil || !r.FailingSince.IsZero() || r.Failures == 0 {
		t.Fatalf("after the cause went: %+v, %v", r, h.Retention)
	}
}

// A store made without retention, with a segment from a manual seal
// (hikoutei seal), opens with a policy and goes on sealing after it.
func TestI38_RetentionUpgradeAStoreSealedByHandKeepsSealing(t *testing.T) {
	dir := t.TempDir()
	before, pin, rep := sealedStore(t, dir, 600, 300)
	s := openStore(t, dir, func(o *Options) { o.Retention = Retention{KeepRecords: 50, MinBatch: 50} })
	h := waitRetention(t, s, "a seal at open", sealed)
	segs, err := s.Segments()
	mustT(t, err)
	if len(segs) != 2 || segs[0].Name != rep.Segment || segs[1].First != rep.Last+1 || segs[1].Last+1 != h.RetentionStatus.SealedBelow {
		t.Fatalf("segments after the upgrade: %+v (manual seal %+v, retention %+v)", segs, rep, h.RetentionStatus)
	}
	got := eventsFrom(t, s, 1)
	for i := range before {
		if got[i].Seq != before[i].Seq || got[i].Commit != before[i].Commit {
			t.Fatalf("event %d differs after the upgrade's seal", before[i].Seq)
		}
	}
	mustT(t, s.Close())
	vr, err := VerifyDir(ctx, dir, VerifyOptions{Pin: &pin})
	mustT(t, err)
	if !vr.Pinned {
		t.Fatalf("the pin taken before both seals: %+v", vr)
	}
}
