package hikoutei_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// WaitSynced returns once the workers wrote what was committed, and not
// while effects wait: a cancelled wait says what it waited on.
func TestWaitSyncedReturnsOnceTheOutboxIsWritten(t *testing.T) {
	ctx := t.Context()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(ctx, t.TempDir(), hikoutei.Options{Sync: sheet.SyncOptions(), NoAdmin: true}, hikoutei.Entity[Flight]("Flight"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := hikouteitest.New(t, s)
	u := s.Begin()
	if err := u.Persist(&Flight{ID: "HK1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	err = s.WaitSynced(cancelled)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "pending") {
		t.Fatalf("WaitSynced with effects waiting and the context cancelled: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- s.WaitSynced(ctx) }()
	h.Drain(ctx)
	if err := <-done; err != nil {
		t.Fatalf("WaitSynced after the outbox drained: %v", err)
	}
	if got := s.Health().SyncHealth; !got.Settled() || got.Failing() {
		t.Fatalf("sync health after WaitSynced: %+v", got)
	}
}

// A store without sync has nothing to wait for: WaitSynced says so.
func TestWaitSyncedWithoutSyncIsSyncStartup(t *testing.T) {
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{NoAdmin: true}, hikoutei.Entity[Flight]("Flight"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.WaitSynced(t.Context()); !errors.Is(err, hikoutei.ErrSyncStartup) {
		t.Fatalf("WaitSynced without sync: %v", err)
	}
}
