package engine_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// copyStoreFiles copies a store's log and read model as they are on disk
// now, as a kill -9 would leave them.
func copyStoreFiles(t *testing.T, from string) string {
	t.Helper()
	to := t.TempDir()
	for _, name := range []string{events.LogFileName, hikoutei.ReadModelFile, hikoutei.ReadModelFile + "-wal", hikoutei.ReadModelFile + "-shm"} {
		data, err := os.ReadFile(filepath.Join(from, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		mustT(t, err)
		mustT(t, os.WriteFile(filepath.Join(to, name), data, 0o600))
	}
	return to
}

// later opens a store a minute after t0: the copied lease of a writer
// that never closed can be taken over.
func later(o *hikoutei.Options) { o.Clock = events.NewManualClock(t0.Add(time.Minute)) }

// acceptingGaps opens a store a minute after t0, accepting a log gap.
func acceptingGaps(o *hikoutei.Options) { later(o); o.AcceptLogGap = true }

func fileHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	entries, err := os.ReadDir(dir)
	mustT(t, err)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "-shm") {
			continue // SQLite's shared-memory index, rebuilt by any reader
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		mustT(t, err)
		out[e.Name()] = sha256.Sum256(data)
	}
	return out
}

// flipNewestMeta flips one byte of the newest of bbolt's two meta pages
// (pages 0 and 1; txid at offset 64, the page size at 24): bbolt then
// falls back to the older meta, one commit back.
func flipNewestMeta(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	mustT(t, err)
	pageSize := int(binary.LittleEndian.Uint32(data[24:]))
	newest := 0
	if binary.LittleEndian.Uint64(data[pageSize+64:]) > binary.LittleEndian.Uint64(data[64:]) {
		newest = pageSize
	}
	data[newest+40] ^= 0x01 // inside the root bucket's page id: the checksum no longer matches
	mustT(t, os.WriteFile(path, data, 0o600))
}

func TestRepro4_CorruptNewestMetaPageIsFoundBeforeAnythingIsAppended(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 800)
	all := readAirports(t)
	commit(t, s, &all[800]) // the commit the damaged meta page loses
	checkpoint := engine.Of(s).Checkpoint()
	damaged := copyStoreFiles(t, dir)
	mustT(t, s.Close())
	flipNewestMeta(t, filepath.Join(damaged, events.LogFileName))

	before := fileHashes(t, damaged)
	_, err := hikoutei.Open(t.Context(), damaged, hikoutei.Options{Clock: events.NewManualClock(t0.Add(time.Minute)), HeartbeatInterval: -1, AcquireWait: -1}, airports...)
	var refused *engine.LogGapError
	if !errors.Is(err, hikoutei.ErrLogBehindReadModel) || !errors.As(err, &refused) || refused.Gap.ReadModelCheckpoint != checkpoint {
		t.Fatalf("open: %v", err)
	}
	if after := fileHashes(t, damaged); !maps.Equal(before, after) {
		for k := range before {
			if before[k] != after[k] {
				t.Errorf("the refused open changed %s", k)
			}
		}
		t.FailNow()
	}

	// Recovery: salvage with the read model's checkpoint as head brings the
	// lost commit back from the file's pages.
	salvaged := filepath.Join(t.TempDir(), "salvaged")
	mustT(t, os.Mkdir(salvaged, 0o700))
	rep, err := events.SalvageLog(filepath.Join(damaged, events.LogFileName), filepath.Join(salvaged, events.LogFileName),
		events.SalvageOptions{Head: checkpoint})
	mustT(t, err)
	if len(rep.Lost) > 0 || rep.Head != checkpoint {
		t.Fatalf("salvage lost %s, head %d", rep.Lost, rep.Head)
	}
	s = openStore(t, salvaged, later)
	got, err := hikoutei.Find[Airport](ctx, s)
	mustT(t, err)
	mustT(t, s.Close())
	if len(got) != 801 {
		t.Fatalf("%d of 801 acknowledged airports after salvage", len(got))
	}

	s = openStore(t, damaged, acceptingGaps)
	defer s.Close()
	var gap *engine.LogGapError
	if h := s.Health(); !errors.Is(h.Integrity, hikoutei.ErrLogBehindReadModel) || !errors.As(h.Integrity, &gap) {
		t.Fatalf("health does not report the lost records: %+v", h)
	}
	if gap.Gap.ReadModelCheckpoint != checkpoint || gap.Gap.LogHead >= checkpoint {
		t.Fatalf("gap %+v, read model was at %d", gap.Gap, checkpoint)
	}
	kept := filepath.Join(damaged, gap.Gap.SetAside)
	if cp, _, err := projector.ReadCheckpoint(kept); err != nil || cp != checkpoint {
		t.Fatalf("the read model set aside is at %d (%v), want %d untouched", cp, err, checkpoint)
	}
	recorded := 0
	mustT(t, engine.Of(s).Log().ReadFrom(gap.Gap.LogHead+1, func(e events.Event) error {
		if g, ok := e.Payload.(events.LogGapDetected); ok && g == gap.Gap {
			recorded++
		}
		return nil
	}))
	if recorded != 1 {
		t.Fatalf("the gap is recorded %d times in the log", recorded)
	}
}

// TestI27_ReadModelAheadOfTheLogIsRebuiltBeforeAnythingIsAppended: the
// read model of a log that went back (an older log.db restored) is, once
// the gap is accepted, set aside untouched and rebuilt from the log; the
// rebuilt one equals a replay of the log, gap record included.
func TestI27_ReadModelAheadOfTheLogIsRebuiltBeforeAnythingIsAppended(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 300)
	older := copyStoreFiles(t, dir)
	loadAirports(t, s, 600)
	mustT(t, s.Close())
	newer := filepath.Join(dir, hikoutei.ReadModelFile)
	before := digest(t, newer)
	data, err := os.ReadFile(filepath.Join(older, events.LogFileName))
	mustT(t, err)
	mustT(t, os.WriteFile(filepath.Join(dir, events.LogFileName), data, 0o600)) // an operator restores an older log

	s = openStore(t, dir, acceptingGaps)
	h := s.Health()
	n := engine.Of(s).Checkpoint()
	mustT(t, s.Close())
	var gap *engine.LogGapError
	if !errors.As(h.Integrity, &gap) {
		t.Fatalf("health: %+v", h)
	}
	if got := digest(t, filepath.Join(dir, gap.Gap.SetAside)); got != before {
		t.Fatal("the read model ahead of the log was changed before it was set aside")
	}
	if live, rebuilt := digest(t, newer), replayDigest(t, dir, n+1, airports...); live != rebuilt {
		t.Fatalf("read model %s != rebuild of the log %s", live, rebuilt)
	}
}

// TestI26_AnUnusableReadModelIsKeptAsideNotDeleted: a read.sqlite the
// store cannot use is renamed aside, byte for byte, and a new one is
// rebuilt from the log; nothing is deleted.
func TestI26_AnUnusableReadModelIsKeptAsideNotDeleted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 50)
	mustT(t, s.Close())
	rm := filepath.Join(dir, hikoutei.ReadModelFile)
	garbage := []byte("not a database, but somebody's bytes")
	mustT(t, os.WriteFile(rm, garbage, 0o600))

	s = openStore(t, dir)
	got, err := hikoutei.Find[Airport](ctx, s)
	mustT(t, err)
	mustT(t, s.Close())
	if len(got) != 50 {
		t.Fatalf("%d of 50 airports after the rebuild", len(got))
	}
	kept, _ := filepath.Glob(rm + ".unusable-*")
	if len(kept) != 1 {
		t.Fatalf("kept: %v", kept)
	}
	if data, _ := os.ReadFile(kept[0]); string(data) != string(garbage) {
		t.Fatal("the unusable read model was not kept as it was")
	}
}

// runSubscription runs the callback subscription name until it handled
// every event committed so far, and returns the seqs it was handed.
func runSubscription(t *testing.T, s *hikoutei.Store, name string) []uint64 {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var seqs []uint64
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(ctx, name, func(_ context.Context, ev hikoutei.Event) error {
			mu.Lock()
			seqs = append(seqs, ev.Seq)
			mu.Unlock()
			return nil
		}, hikoutei.CheckpointEvery(1))
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		subs, err := s.Subscriptions(t.Context())
		mustT(t, err)
		if len(subs) == 1 && subs[0].Lag == 0 && subs[0].Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscription %s did not catch up: %+v", name, subs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return seqs
}

// F8: after an accepted log gap, numbering continues past the highest
// sequence ever handed out (the read model's checkpoint), so no seq names
// two events: the lost ones are recorded as holes (and in the log), the
// subscriptions' checkpoints are carried over and stay meaningful (no
// redelivery from the first event, nothing new skipped), and a pin taken
// before the gap no longer vouches for the log.
func TestF8_AfterAnAcceptedLogGapNumberingContinuesPastTheLostSequences(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 100)
	older := copyStoreFiles(t, dir)
	pinBefore, err := s.ChainHead()
	mustT(t, err)
	loadAirports(t, s, 150)
	handled := runSubscription(t, s, "consumer")
	mustT(t, s.Close())
	cp, _, err := projector.ReadCheckpoint(filepath.Join(dir, hikoutei.ReadModelFile))
	mustT(t, err)
	subCheckpoint := handled[len(handled)-1]
	data, err := os.ReadFile(filepath.Join(older, events.LogFileName))
	mustT(t, err)
	mustT(t, os.WriteFile(filepath.Join(dir, events.LogFileName), data, 0o600)) // an operator restores an older log

	s = openStore(t, dir, acceptingGaps)
	defer s.Close()
	var gap *engine.LogGapError
	if h := s.Health(); !errors.As(h.Integrity, &gap) || gap.Gap.ReadModelCheckpoint != cp {
		t.Fatalf("health: %+v", h)
	}
	res := commit(t, s, &Airport{ID: "NEW", Name: "after the gap"})
	if res.FirstSeq <= cp {
		t.Fatalf("the first commit after the gap got seq %d, at or below the highest ever handed out (%d)", res.FirstSeq, cp)
	}
	mustT(t, engine.Of(s).Log().ReadFrom(gap.Gap.LogHead+1, func(ev events.Event) error {
		if ev.Seq <= cp {
			t.Errorf("seq %d (%s) reuses a lost sequence (lost %d-%d)", ev.Seq, ev.Type(), gap.Gap.LogHead+1, cp)
		}
		return nil
	}))
	holes, err := engine.Of(s).Log().Holes()
	mustT(t, err)
	if want := fmt.Sprintf("%d-%d", gap.Gap.LogHead+1, cp); holes.String() != want {
		t.Fatalf("holes %q, want %q", holes, want)
	}
	subs, err := s.Subscriptions(t.Context())
	mustT(t, err)
	if len(subs) != 1 || subs[0].Checkpoint != subCheckpoint {
		t.Fatalf("subscriptions after the gap %+v, want the checkpoint %d carried over", subs, subCheckpoint)
	}
	again := runSubscription(t, s, "consumer")
	if len(again) == 0 || again[0] <= cp {
		t.Fatalf("after the gap the subscription was handed %v: want only events after %d", again, cp)
	}
	// The chain: the gap is a recorded hole; a pin from before it fails
	// naming it, the head now vouches with holes accepted.
	_, err = s.Verify(t.Context(), hikoutei.VerifyOptions{AcceptSalvageHoles: true, Pin: &pinBefore})
	if !errors.Is(err, hikoutei.ErrChainPinMismatch) || !strings.Contains(err.Error(), "predates salvage hole") {
		t.Fatalf("a pin from before the gap: %v", err)
	}
	head, err := s.ChainHead()
	mustT(t, err)
	if rep, err := s.Verify(t.Context(), hikoutei.VerifyOptions{AcceptSalvageHoles: true, Pin: &head}); err != nil || !rep.Pinned {
		t.Fatalf("the head after the gap: %+v %v", rep, err)
	}
}
