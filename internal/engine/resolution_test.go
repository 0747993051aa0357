package engine_test

import (
	"errors"
	"path/filepath"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// End-to-end tests of a person's resolution of a conflict (I30): "use the
// sheet's value" (accept_user) beside "keep the system's value"
// (acknowledge_system), through Store.ResolveConflict, the emulator and
// the real outbox. The decision itself is tested in aggregates.

const partSystem = "Part_System"

// reconcileState is the state of a resolution's row reconcile effect.
func (x *synced) reconcileState(id string) aggregates.EffectState {
	x.t.Helper()
	var state aggregates.EffectState
	x.readModel(func(p *projector.Projector) error {
		r, _, err := p.Effect(id)
		state = r.State
		return err
	})
	return state
}

// persistedSince returns the entity.persisted events appended after seq.
func (x *synced) persistedSince(after uint64) []events.EntityPersisted {
	x.t.Helper()
	var out []events.EntityPersisted
	mustT(x.t, x.e.Log().ReadFrom(after+1, func(e events.Event) error {
		if p, ok := e.Payload.(events.EntityPersisted); ok {
			out = append(out, p)
		}
		return nil
	}))
	return out
}

func conflictByID(t *testing.T, x *synced, id string) hikoutei.Conflict {
	t.Helper()
	all, err := x.Conflicts(ctx, "")
	mustT(t, err)
	for _, c := range all {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no conflict %s", id)
	return hikoutei.Conflict{}
}

func TestI30_UseSheetCommitsThePersonsValueResolvesBumpsTheEpochAndTheRowsConverge(t *testing.T) {
	t.Parallel()
	notes := newNotes()
	x := openInbound(t, t.TempDir(), nil, notes.hook)
	c := bothChanged(t, x) // canonical qty 5 (revision 2), the person typed 9
	notes.next(t)
	before := x.head()
	res, err := x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, hikoutei.WithActor(hikoutei.ActorCLI))
	if err != nil || res.Outcome != hikoutei.AckApplied || res.ReconcileEffect == "" {
		t.Fatalf("use sheet: %+v %v", res, err)
	}
	if p := x.part("1"); p.Qty != 9 {
		t.Fatalf("the entity did not take the person's value: qty %d", p.Qty)
	}
	ps := x.persistedSince(before)
	if len(ps) != 1 || ps[0].Actor != events.ActorCLI || ps[0].Revisions["qty"] != 3 || len(ps[0].Fields) != 1 {
		t.Fatalf("the application sees %+v, want one ordinary change of qty at revision 3 by the CLI", ps)
	}
	types := x.eventTypes(before)
	if types[events.TypeAcceptUserRequested] != 1 || types[events.TypeAcceptUserApplied] != 1 || types[events.TypeConflictResolved] != 1 ||
		types[events.TypeCandidateCleared] != 1 {
		t.Fatalf("use sheet appended %v", types)
	}
	if got := conflictByID(t, x, c.ID); got.Status != hikoutei.ConflictResolved || got.Resolution != events.ResolutionUseSheet {
		t.Fatalf("conflict after use sheet %+v", got)
	}
	if sf := x.sheetField(partInput, "1", "qty"); sf.CandidateHash != "" || sf.CandidateEpoch != c.CandidateEpoch+1 {
		t.Fatalf("candidate after use sheet %+v: cleared, epoch bumped", sf)
	}
	if ev := notes.next(t); ev.Type != "resolved" || ev.Resolution != string(events.ResolutionUseSheet) || ev.Actor != "cli" {
		t.Fatalf("OnConflict got %+v", ev)
	}
	x.drain()
	if x.reconcileState(res.ReconcileEffect) != aggregates.EffectApplied || x.cellOf(partInput, "1", "qty") != "9" ||
		x.cellOf(partSystem, "1", "qty") != "9" || x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus) != "RESOLVED" {
		t.Fatalf("rows after use sheet: input %v, system %v, audit %v", x.rowOf(partInput, "1"), x.rowOf(partSystem, "1"),
			x.rowOf(layout.ConflictsTab, c.ID))
	}
	settled := x.head()
	if r := x.poll(); r.Stats.Candidates != 0 || r.Stats.Accepted != 0 || x.head() != settled {
		t.Fatalf("the poll after use sheet found work: %+v %v", r, x.eventTypes(settled))
	}
	// The read model of the resolution rebuilds identically from the log.
	live, cpLive := digest(t, x.ReadModelPath()), x.e.Checkpoint()
	dir := x.Dir()
	mustT(t, x.Close())
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	cp, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{UpTo: cpLive}, parts...)
	mustT(t, err)
	if rebuilt := digest(t, target); cp != cpLive || rebuilt != live {
		t.Fatalf("rebuilt read model differs from the live one (%d/%d)", cp, cpLive)
	}
}

func TestI30_KeepSystemThroughResolveConflictKeepsTheSystemsValue(t *testing.T) {
	notes := newNotes()
	x := openInbound(t, t.TempDir(), nil, notes.hook)
	c := bothChanged(t, x)
	notes.next(t)
	before := x.head()
	res, err := x.ResolveConflict(ctx, c.ID, hikoutei.KeepSystem)
	if err != nil || res.Outcome != hikoutei.AckApplied {
		t.Fatalf("keep system: %+v %v", res, err)
	}
	if types := x.eventTypes(before); types[events.TypeAckApplied] != 1 || types[events.TypeEntityPersisted] != 0 {
		t.Fatalf("keep system appended %v", types)
	}
	if ev := notes.next(t); ev.Resolution != string(events.ResolutionAcknowledged) || ev.Actor != "application" {
		t.Fatalf("OnConflict got %+v", ev)
	}
	x.drain()
	if p := x.part("1"); p.Qty != 5 || x.cellOf(partInput, "1", "qty") != "5" || x.cellOf(partSystem, "1", "qty") != "5" {
		t.Fatalf("keep system: entity %d, input %v, system %v", p.Qty, x.rowOf(partInput, "1"), x.rowOf(partSystem, "1"))
	}
}

func TestI30_ALaterHumanEditIsNeverOverwrittenStaleBeforeTheCommandBlockedAfter(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	fence := hikoutei.WithFence(c.CanonicalRevision, c.CandidateHash, c.CandidateEpoch)
	// Before the command: the person types again and the poll sees it.
	x.typeIn("1", "qty", "12")
	x.poll()
	res, err := x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, fence)
	if !errors.Is(err, hikoutei.ErrConflictStale) || res.Outcome != hikoutei.AckStale {
		t.Fatalf("use sheet of a value the person replaced: %+v %v", res, err)
	}
	if p := x.part("1"); p.Qty != 5 {
		t.Fatalf("a stale command changed the entity: qty %d", p.Qty)
	}
	// With the fence read now, the person's current value (12) is used.
	res, err = x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet)
	if err != nil || res.Outcome != hikoutei.AckApplied || x.part("1").Qty != 12 {
		t.Fatalf("use sheet: %+v %v", res, err)
	}
	// After the command, before its reconcile lands: blocked, not overwritten.
	x.typeIn("1", "qty", "11")
	x.drain()
	if x.reconcileState(res.ReconcileEffect) != aggregates.EffectBlocked || x.cellOf(partInput, "1", "qty") != "11" {
		t.Fatalf("reconcile %s, sheet qty %s", x.reconcileState(res.ReconcileEffect), x.cellOf(partInput, "1", "qty"))
	}
	if x.part("1").Qty != 12 || x.cellOf(partSystem, "1", "qty") != "12" {
		t.Fatalf("entity %d, system row %v", x.part("1").Qty, x.rowOf(partSystem, "1"))
	}
	// The later edit is a new candidate at the new epoch: a new conflict.
	r := x.poll()
	open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen)
	if r.Stats.Candidates != 1 || len(open) != 1 || open[0].ID == c.ID || open[0].CandidateEpoch != c.CandidateEpoch+1 {
		t.Fatalf("after the blocked reconcile: %+v, open %+v", r, open)
	}
}

func TestI30_AResolutionRacingAnApplicationCommitIsStale(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	fence := hikoutei.WithFence(c.CanonicalRevision, c.CandidateHash, c.CandidateEpoch)
	p := x.part("1")
	p.Qty = 6 // the application's commit lands first: it raises qty's revision
	commit(t, x.Store, p)
	for _, how := range []hikoutei.Resolution{hikoutei.UseSheet, hikoutei.KeepSystem} {
		before := x.head()
		res, err := x.ResolveConflict(ctx, c.ID, how, fence)
		if !errors.Is(err, hikoutei.ErrConflictStale) || res.Outcome != hikoutei.AckStale {
			t.Fatalf("%s after an application commit: %+v %v", how, res, err)
		}
		if types := x.eventTypes(before); len(x.persistedSince(before)) != 0 || types[events.TypeConflictResolved] != 0 {
			t.Fatalf("%s: a stale command changed something: %v", how, types)
		}
	}
	if got := x.part("1").Qty; got != 6 {
		t.Fatalf("qty %d, want the application's 6", got)
	}
}

func TestI30_ADoubleResolutionIsIdempotentByCommandID(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	fence := hikoutei.WithFence(c.CanonicalRevision, c.CandidateHash, c.CandidateEpoch)
	first, err := x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, fence, hikoutei.WithCommandID("k1"), hikoutei.WithActor(hikoutei.ActorSheet))
	if err != nil || first.Outcome != hikoutei.AckApplied {
		t.Fatalf("first: %+v %v", first, err)
	}
	head := x.head()
	again, err := x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, fence, hikoutei.WithCommandID("k1"), hikoutei.WithActor(hikoutei.ActorSheet))
	if err != nil || again != first || x.head() != head {
		t.Fatalf("repeat: %+v %v (first %+v), appended %v", again, err, first, x.eventTypes(head))
	}
	if _, err := x.ResolveConflict(ctx, c.ID, hikoutei.KeepSystem, fence, hikoutei.WithCommandID("k1")); !errors.Is(err, hikoutei.ErrCommandIDReused) {
		t.Fatalf("the same id for another resolution: %v", err)
	}
	if _, err := x.ResolveConflict(ctx, c.ID, hikoutei.KeepSystem, fence); !errors.Is(err, hikoutei.ErrConflictNotOpen) {
		t.Fatalf("a second resolution without the id: %v", err)
	}
	if x.head() != head+2 || len(x.persistedSince(head)) != 0 || x.part("1").Qty != 9 {
		t.Fatalf("after the repeats: %v", x.eventTypes(head))
	}
	if _, err := x.ResolveConflict(ctx, "cf-none", hikoutei.UseSheet); !errors.Is(err, hikoutei.ErrConflictNotFound) {
		t.Fatalf("unknown conflict: %v", err)
	}
	if _, err := x.ResolveConflict(ctx, c.ID, "both"); !errors.Is(err, hikoutei.ErrInvalidResolution) {
		t.Fatalf("unknown resolution: %v", err)
	}
}

func TestI30_UseSheetOfALegacyConflictIsBlocked(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	id := legacyConflict(t, x)
	res, err := x.ResolveConflict(ctx, id, hikoutei.UseSheet)
	if !errors.Is(err, hikoutei.ErrConflictBlocked) || res.Outcome != hikoutei.AckRejected || x.part("1").Qty != 1 {
		t.Fatalf("use sheet of a legacy conflict: %+v %v", res, err)
	}
}

func TestI30_AUseSheetCommittedBeforeARestartIsReconciledOnceAfterIt(t *testing.T) {
	t.Parallel()
	sheet := hikouteitest.NewSheet(t)
	dir := t.TempDir()
	x := openSyncedOn(t, dir, sheet, nil, parts)
	c := bothChanged(t, x)
	res, err := x.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, hikoutei.WithCommandID("k-restart"))
	mustT(t, err)
	mustT(t, x.Close()) // before any dispatch: the row effects are only in the log
	y := openSyncedOn(t, dir, restarted(t, sheet), nil, parts)
	again, err := y.ResolveConflict(ctx, c.ID, hikoutei.UseSheet, hikoutei.WithCommandID("k-restart"),
		hikoutei.WithFence(c.CanonicalRevision, c.CandidateHash, c.CandidateEpoch))
	if err != nil || again != res {
		t.Fatalf("the command repeated after the restart: %+v %v, first %+v", again, err, res)
	}
	y.drain()
	if y.reconcileState(res.ReconcileEffect) != aggregates.EffectApplied || y.cellOf(partInput, "1", "qty") != "9" ||
		y.cellOf(partSystem, "1", "qty") != "9" || y.part("1").Qty != 9 {
		t.Fatalf("after the restart: input %v, system %v", y.rowOf(partInput, "1"), y.rowOf(partSystem, "1"))
	}
	applied, queued := 0, 0
	mustT(t, y.e.Log().ReadFrom(1, func(e events.Event) error {
		for _, pl := range perEffect(e.Payload) {
			switch p := pl.(type) {
			case events.EffectApplied:
				if p.EffectID == res.ReconcileEffect {
					applied++
				}
			case events.EffectQueued:
				if p.EffectID == res.ReconcileEffect {
					queued++
				}
			}
		}
		return nil
	}))
	if applied != 1 || queued != 1 || y.unsettled() != 0 {
		t.Fatalf("the reconcile was queued %d and applied %d times, unsettled %d", queued, applied, y.unsettled())
	}
	if r := y.poll(); r.Stats.Candidates != 0 || r.Stats.Accepted != 0 {
		t.Fatalf("the poll after the restart found work: %+v", r)
	}
}

// perEffect is p, or the per-effect payloads a batch settle stands for.
func perEffect(p events.Payload) []events.Payload {
	if b, ok := p.(events.Batch); ok {
		return b.Each()
	}
	return []events.Payload{p}
}
