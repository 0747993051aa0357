package hikoutei_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Open with a context already done creates nothing and returns the
// context's error.
func TestOpenWithACancelledContextCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := hikoutei.Open(ctx, dir, hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Airport]("Airport"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Open: %v; want context.Canceled", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open with a cancelled context created %s (%v)", dir, err)
	}
}

// The context's deadline shortens Open's wait for another holder's file
// lock: with OpenTimeout at a minute, Open of a held store fails with
// store_locked well before it.
func TestOpenContextDeadlineShortensTheLockWait(t *testing.T) {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = hikoutei.Open(ctx, dir, hikoutei.Options{NoAdmin: true, OpenTimeout: time.Minute}, hikoutei.Entity[Airport]("Airport"))
	if !errors.Is(err, hikoutei.ErrStoreLocked) {
		t.Fatalf("Open of a held store: %v; want store_locked", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("Open waited %v: the context's deadline did not bound OpenTimeout (1 min)", d)
	}
}

// Replay and RebuildReadModel with a context already done change nothing
// and return the context's error.
func TestReplayWithACancelledContextWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	if err := u.Persist(&Airport{ID: "GKA", Name: "Goroka"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	if _, err := hikoutei.Replay(ctx, dir, target, hikoutei.ReplayOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay: %v; want context.Canceled", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled Replay left %s (%v)", target, err)
	}
	if _, aside, err := hikoutei.RebuildReadModel(ctx, dir, hikoutei.ReplayOptions{}); !errors.Is(err, context.Canceled) || aside != "" {
		t.Fatalf("RebuildReadModel: aside %q, %v; want context.Canceled and nothing set aside", aside, err)
	}
	if _, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{}); err != nil {
		t.Fatalf("Replay with a live context: %v", err)
	}
}

// A replay whose context is cancelled while it runs stops at the next
// batch (2,048 events) and leaves no target.
func TestReplayStopsBetweenBatchesWhenItsContextIsCancelled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	for i := range 5000 {
		if err := u.Persist(&Airport{ID: fmt.Sprintf("A%05d", i), Name: "n"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var batches int
	opts := hikoutei.ReplayOptions{Progress: func(p hikoutei.Progress) {
		batches++
		cancel() // after the first batch
	}}
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	if _, err := hikoutei.Replay(ctx, dir, target, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("Replay: %v; want context.Canceled", err)
	}
	if batches != 1 {
		t.Fatalf("Replay applied %d batches after its context was cancelled in the first; want it to stop", batches)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled Replay left %s (%v)", target, err)
	}
}
