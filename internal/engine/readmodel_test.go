package engine_test

import (
	"errors"
	"path/filepath"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// mixedHistory commits creates, updates and removes of n airports.
func mixedHistory(t *testing.T, s *hikoutei.Store, n int) {
	t.Helper()
	loadAirports(t, s, n)
	all := readAirports(t)[:n]
	u := s.Begin()
	for i := 0; i < n; i += 7 {
		all[i].Altitude++
		all[i].Notes = "checked"
		mustT(t, u.Persist(&all[i]))
	}
	for i := 3; i < n; i += 11 {
		mustT(t, u.Remove(&all[i]))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
}

func TestI23_LiveEqualsRebuiltFromZeroEqualsRebuiltFromSnapshot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 400)
	m, err := s.Snapshot(ctx)
	mustT(t, err)
	mixedHistory(t, s, 600) // the tail after the snapshot
	live, n := digest(t, s.ReadModelPath()), engine.Of(s).Checkpoint()
	mustT(t, s.Close())
	if fromZero := replayDigest(t, dir, n, airports...); fromZero != live {
		t.Fatalf("rebuilt from zero %s != live %s", fromZero, live)
	}

	mustT(t, removeReadModel(filepath.Join(dir, hikoutei.ReadModelFile)))
	var first hikoutei.Progress
	s = openStore(t, dir, func(o *hikoutei.Options) {
		o.Progress = func(p hikoutei.Progress) {
			if first.Phase == "" {
				first = p
			}
		}
	})
	fromSnap, n2 := digest(t, s.ReadModelPath()), engine.Of(s).Checkpoint()
	mustT(t, s.Close())
	if first.Phase != "snapshot" || first.Total != n2-m.Seq {
		t.Fatalf("restart did not replay only the tail after snapshot %d: %+v", m.Seq, first)
	}
	if fromZero := replayDigest(t, dir, n2, airports...); fromZero != fromSnap {
		t.Fatalf("snapshot+tail %s != rebuilt from zero %s", fromSnap, fromZero)
	}
}

// Note is a one-field entity, declared to the engine directly by its shape
// (noteShape) where a test needs engine.Config, and to the public API by
// its Go type.
type Note struct {
	ID   string `hikoutei:"id,pk"`
	Text string `hikoutei:"text"`
}

var noteShape = events.EntityShape{Name: "Note", PK: "id", Fields: []events.FieldShape{{Name: "text", Kind: events.KindString, Owner: events.OwnerSystem}}}

func TestCatchUpAfterDeathBetweenLogCommitAndProjection(t *testing.T) {
	dir := t.TempDir()
	fault := &engine.Fault{}
	e, err := engine.Open(dir, engine.Config{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, Fault: fault},
		engine.Shapes(noteShape))
	mustT(t, err)
	_, err = e.Commit([]engine.Command{{Entity: "Note", ID: "1", Values: map[string]any{"text": "before"}}})
	mustT(t, err)
	fault.FailNextProjection = true // the process "dies" after the log commit
	_, err = e.Commit([]engine.Command{{Entity: "Note", ID: "2", Values: map[string]any{"text": "lost in the read model only"}}})
	if !errors.Is(err, hikoutei.ErrReadModelBehind) {
		t.Fatalf("commit with failing projection: %v", err)
	}
	mustT(t, e.Close())
	var phases []hikoutei.Progress
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
		Progress: func(p hikoutei.Progress) { phases = append(phases, p) }}, hikoutei.Entity[Note]("Note"))
	mustT(t, err)
	defer s.Close()
	if n, err := hikoutei.Get[Note](ctx, s, "2"); err != nil || n.Text != "lost in the read model only" {
		t.Fatalf("after reopen: %+v %v", n, err)
	}
	if len(phases) == 0 || phases[0].Phase != "catch-up" || phases[len(phases)-1].Done != phases[len(phases)-1].Total {
		t.Fatalf("progress %+v", phases)
	}
}
