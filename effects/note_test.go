package effects_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
)

// staticNotes is a NoteSource the test sets.
type staticNotes struct {
	mu    sync.Mutex
	notes []aggregates.CellNote
}

func (s *staticNotes) set(n ...aggregates.CellNote) { s.mu.Lock(); s.notes = n; s.mu.Unlock() }

func (s *staticNotes) Notes(string) ([]aggregates.CellNote, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]aggregates.CellNote(nil), s.notes...), nil
}

func TestNotesOnlyPassWritesDifferencesOnceClearsThemAndIsFenced(t *testing.T) {
	src := &staticNotes{}
	r := newRig(t, func(c *effects.Config) { c.Notes = src })
	ctx := context.Background()
	r.commit("12", airport("Twelve", 2))
	r.pass()
	note := aggregates.CellNote{Tab: "Airport_Input", Anchor: "12", Column: "notes", Text: "hikoutei: conflict: kept x — see Sync_Conflicts"}
	src.set(note)
	r.emu.ResetCounters()
	r.pass()
	if c := r.emu.Counters(sheetID); c.Writes != 1 || r.disp.C.Notes.Load() != 1 {
		t.Fatalf("a notes-only pass: %+v, notes %d", c, r.disp.C.Notes.Load())
	}
	r.emu.ResetCounters()
	r.pass()
	if c := r.emu.Counters(sheetID); c.Writes != 0 {
		t.Fatalf("an unchanged note was written again: %+v", c)
	}
	src.set()
	r.pass()
	if r.disp.C.Notes.Load() != 2 {
		t.Fatalf("the note was not cleared: %d note writes", r.disp.C.Notes.Load())
	}

	f := r.ob.Fence()
	f.Epoch += 5
	must(t, r.prov.WriteAuthority(ctx, r.wb, f))
	disp, err := effects.NewDispatcher(effects.Config{Spreadsheet: "sheets", Provider: r.prov, Workbook: r.wb, Outbox: r.ob,
		Clock: r.clock, Logger: slog.New(slog.DiscardHandler), AuthorityTTL: testTTL, Notes: src})
	must(t, err)
	src.set(note)
	r.emu.ResetCounters()
	if _, err := disp.Pass(ctx); !errors.Is(err, effects.ErrDivergence) {
		t.Fatalf("notes under a newer authority: %v", err)
	}
	if c := r.emu.Counters(sheetID); c.Writes != 0 || disp.C.Notes.Load() != 0 {
		t.Fatalf("%d writes under a newer authority", c.Writes)
	}
}
