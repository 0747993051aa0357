package hikoutei_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
	"github.com/hikoutei/hikoutei-go/projector"
)

// A log written in the compact format (batch settle events, effect.queued
// referring to its entity.persisted for values) replays to exactly the
// read model the live store projected from the events in memory: creates,
// updates and removals, synced to both tabs.
func TestCompactLogReplaysToTheLiveReadModel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Logger: slog.New(slog.DiscardHandler), Sync: sheet.SyncOptions()},
		hikoutei.Entity[fixtures.Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	rows := fixtures.Airports(t)[:60]
	commitRows(t, s, rows)
	h.Drain(ctx)
	for i := range rows[:20] {
		rows[i].Name += " (renamed)"
	}
	commitRows(t, s, rows[:20])
	u := s.Begin()
	if err := u.Remove(&rows[59]); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantCompactEvents(t, filepath.Join(dir, events.LogFileName))
	live, err := projector.Digest(filepath.Join(dir, hikoutei.ReadModelFile))
	if err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	if _, err := hikoutei.Replay(ctx, dir, target, hikoutei.ReplayOptions{}, hikoutei.Entity[fixtures.Airport]("Airport")); err != nil {
		t.Fatal(err)
	}
	replayed, err := projector.Digest(target)
	if err != nil {
		t.Fatal(err)
	}
	if replayed != live {
		t.Fatalf("the replayed read model %s differs from the live one %s", replayed, live)
	}
}

func commitRows(t *testing.T, s *hikoutei.Store, rows []fixtures.Airport) {
	t.Helper()
	u := s.Begin()
	for i := range rows {
		if err := u.Persist(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// wantCompactEvents checks that the log at path holds batch settle events
// and effect.queued records that refer to their entity.persisted.
func wantCompactEvents(t *testing.T, path string) {
	t.Helper()
	l, err := events.OpenLog(path, events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	n := map[string]int{}
	err = l.ReadFrom(1, func(e events.Event) error {
		switch p := e.Payload.(type) {
		case events.EffectsClaimed, events.EffectsApplied, events.EffectClaimed, events.EffectApplied:
			n[string(e.Type())]++
		case events.EffectQueued:
			if p.ValuesOf != 0 && p.Values != nil {
				n["values_of"]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n["values_of"] < 80 || n[string(events.TypeEffectsClaimed)] == 0 || n[string(events.TypeEffectsApplied)] == 0 ||
		n[string(events.TypeEffectClaimed)]+n[string(events.TypeEffectApplied)] != 0 {
		t.Fatalf("the log is not in the compact format: %v", n)
	}
}
