package engine_test

import (
	"errors"
	"maps"
	"path/filepath"
	"sync"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// End-to-end tests of conflicts through the engine: a person's edit and
// the system's change meet on the emulator, the poller detects the
// candidate, commits and acknowledge_system resolve it. The rules
// themselves (I11–I15) are tested beside their code in aggregates.

// conflictNotes collects OnConflict deliveries.
type conflictNotes struct {
	mu  sync.Mutex
	evs []hikoutei.ConflictEvent
	ch  chan struct{}
}

func newNotes() *conflictNotes { return &conflictNotes{ch: make(chan struct{}, 64)} }

func (n *conflictNotes) hook(o *hikoutei.SyncOptions) {
	o.OnConflict = func(ev hikoutei.ConflictEvent) {
		n.mu.Lock()
		n.evs = append(n.evs, ev)
		n.mu.Unlock()
		n.ch <- struct{}{}
	}
}

// next waits for the next delivery (the hook runs on its own goroutine).
func (n *conflictNotes) next(t *testing.T) hikoutei.ConflictEvent {
	t.Helper()
	select {
	case <-n.ch:
	case <-time.After(20 * time.Second):
		t.Fatal("no OnConflict delivery arrived")
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.evs[len(n.evs)-1]
}

// bothChanged builds the I11 situation on part 1 (qty 1 on the sheet): the
// application sets qty 5 while a person types 9; the system's guarded write
// meets the person's edit and is not made; the poll then sees A=9 against
// B=5 with the sheet having shown 1.
func bothChanged(t *testing.T, x *synced) hikoutei.Conflict {
	t.Helper()
	seedParts(t, x, 2)
	p := x.part("1")
	p.Qty = 5
	commit(t, x.Store, p)
	x.typeIn("1", "qty", "9")
	x.drain()
	if got := x.cellOf(partInput, "1", "qty"); got != "9" {
		t.Fatalf("the system's write overwrote the person's edit: qty %q", got)
	}
	before := x.head()
	r := x.poll()
	if r.Stats.Candidates != 1 {
		t.Fatalf("poll %+v", r)
	}
	types := x.eventTypes(before)
	if types[events.TypeCandidateDetected] != 1 || types[events.TypeConflictOpened] != 1 || types[events.TypeEffectQueued] != 1 ||
		types[events.TypeConflictResolved] != 0 || types[events.TypeAckRequested] != 0 || types[events.TypeEntityPersisted] != 0 {
		t.Fatalf("detection appended %v", types)
	}
	open, err := x.Conflicts(ctx, hikoutei.ConflictOpen)
	mustT(t, err)
	if len(open) != 1 {
		t.Fatalf("open conflicts %+v", open)
	}
	return open[0]
}

func TestCandidateAndOpenConflictPersistedOnlyAuditQueuedPollAndRestartNeverResolve(t *testing.T) {
	sheet := hikouteitest.NewSheet(t)
	dir := t.TempDir()
	notes := newNotes()
	x := openSyncedOn(t, dir, sheet, nil, parts, notes.hook)
	c := bothChanged(t, x)
	if ev := notes.next(t); ev.Type != "opened" || ev.ConflictID != c.ID || ev.Field != "qty" || ev.SystemValue != "5" || ev.SheetValue != "9" {
		t.Fatalf("OnConflict got %+v", ev)
	}
	visible := x.visible(partInput, "1")
	rowNow := x.rowOf(partInput, "1")
	if c.VisibleHash == "" || c.VisibleHash == visible || c.CandidateHash == "" || c.CandidateEpoch != 0 || c.CanonicalRevision != 2 {
		t.Fatalf("conflict evidence %+v (visible %s, row %v)", c, visible, rowNow)
	}
	sf := x.sheetField(partInput, "1", "qty")
	if sf.CandidateHash != c.CandidateHash || sf.CandidateRow != c.VisibleHash || sf.ConflictID != c.ID {
		t.Fatalf("candidate %+v vs conflict %+v", sf, c)
	}
	if p := x.part("1"); p.Qty != 5 {
		t.Fatalf("the candidate was written into the entity: qty %d", p.Qty)
	}
	x.drain()
	if got := x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus); got != "OPEN" {
		t.Fatalf("audit row status %q", got)
	}
	before := x.head()
	x.emu.ResetCounters()
	x.poll()
	x.fullScan()
	if h := x.head(); h != before {
		t.Fatalf("repeated polls appended %v", x.eventTypes(before))
	}
	mustT(t, x.Close())
	y := openSyncedOn(t, dir, restarted(t, sheet), nil, parts)
	y.poll()
	y.fullScan()
	open, err := y.Conflicts(ctx, hikoutei.ConflictOpen)
	mustT(t, err)
	if len(open) != 1 || open[0].ID != c.ID {
		t.Fatalf("after a restart: %+v", open)
	}
}

func TestOnlyAStrictlyHigherRevisionOfTheSameFieldResolvesSystemWins(t *testing.T) {
	notes := newNotes()
	x := openInbound(t, t.TempDir(), nil, notes.hook)
	c := bothChanged(t, x)
	notes.next(t)
	p := x.part("1")
	p.Name = "renamed" // unrelated field
	commit(t, x.Store, p)
	commit(t, x.Store, p) // same values: no revision raised
	if open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen); len(open) != 1 {
		t.Fatalf("an unrelated or same-value write resolved the conflict: %+v", open)
	}
	p.Qty = 6
	before := x.head()
	res := commit(t, x.Store, p)
	var resolvedCommit string
	var inputExpected any // nil until the Input rewrite is queued
	mustT(t, x.e.Log().ReadFrom(before+1, func(e events.Event) error {
		switch p := e.Payload.(type) {
		case events.ConflictResolved:
			resolvedCommit = e.Commit
			if p.Resolution != events.ResolutionSystemWins {
				t.Errorf("resolution %v", p.Resolution)
			}
		case events.EffectQueued:
			if p.Tab == partInput {
				inputExpected = p.ExpectedHash
			}
		}
		return nil
	}))
	if resolvedCommit != res.Commit || inputExpected != any(c.VisibleHash) {
		t.Fatalf("resolution commit %q vs %q; input rewrite guarded by %v, want candidate-time %s", resolvedCommit, res.Commit, inputExpected, c.VisibleHash)
	}
	if ev := notes.next(t); ev.Type != "resolved" || ev.Resolution != string(events.ResolutionSystemWins) {
		t.Fatalf("OnConflict got %+v", ev)
	}
	if sf := x.sheetField(partInput, "1", "qty"); sf.CandidateHash != "" || sf.CandidateEpoch != 1 {
		t.Fatalf("candidate after resolution %+v", sf)
	}
	x.drain()
	if x.cellOf(partInput, "1", "qty") != "6" || x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus) != "RESOLVED" {
		t.Fatalf("input %v, audit %v", x.rowOf(partInput, "1"), x.rowOf(layout.ConflictsTab, c.ID))
	}
	if r := x.poll(); r.Escalated != 0 {
		t.Fatalf("after system-wins the tab is not certified: %+v", r)
	}
}

func TestAcknowledgeSystemIsFencedAndABlockedReconcileNeverOverwrites(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	fence := hikoutei.Acknowledge{ConflictID: c.ID, CanonicalRevision: c.CanonicalRevision, CandidateHash: c.CandidateHash, CandidateEpoch: c.CandidateEpoch}
	for _, bad := range []hikoutei.Acknowledge{
		{ConflictID: c.ID, CanonicalRevision: c.CanonicalRevision + 1, CandidateHash: c.CandidateHash},
		{ConflictID: c.ID, CanonicalRevision: c.CanonicalRevision, CandidateHash: "xxh64:0000000000000000"},
		{ConflictID: c.ID, CanonicalRevision: c.CanonicalRevision, CandidateHash: c.CandidateHash, CandidateEpoch: 1},
	} {
		if res, err := x.AcknowledgeSystem(ctx, bad); !errors.Is(err, hikoutei.ErrAckStale) || res.Outcome != hikoutei.AckStale {
			t.Fatalf("ack %+v: %+v %v", bad, res, err)
		}
	}
	if open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen); len(open) != 1 {
		t.Fatal("a stale acknowledge resolved the conflict")
	}
	res, err := x.AcknowledgeSystem(ctx, hikoutei.Acknowledge{ConflictID: fence.ConflictID, CanonicalRevision: 2, CandidateHash: fence.CandidateHash,
		CandidateEpoch: 0})
	if err != nil || res.Outcome != hikoutei.AckApplied || res.ReconcileEffect == "" {
		t.Fatalf("ack: %+v %v", res, err)
	}
	if sf := x.sheetField(partInput, "1", "qty"); sf.CandidateHash != "" || sf.CandidateEpoch != 1 {
		t.Fatalf("candidate after acknowledge %+v", sf)
	}
	// A later human edit before the reconcile lands: blocked, not overwritten.
	x.typeIn("1", "qty", "11")
	x.drain()
	var state aggregates.EffectState
	x.readModel(func(p *projector.Projector) error {
		r, _, err := p.Effect(res.ReconcileEffect)
		state = r.State
		return err
	})
	if state != aggregates.EffectBlocked || x.cellOf(partInput, "1", "qty") != "11" {
		t.Fatalf("reconcile %s, sheet qty %s", state, x.cellOf(partInput, "1", "qty"))
	}
	// The new value is a new candidate at the new epoch: a new conflict.
	r := x.poll()
	open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen)
	if r.Stats.Candidates != 1 || len(open) != 1 || open[0].ID == c.ID || open[0].CandidateEpoch != 1 {
		t.Fatalf("after the blocked reconcile: %+v, open %+v", r, open)
	}
	// No ABA: the old fence cannot act on anything any more.
	if _, err := x.AcknowledgeSystem(ctx, fence); !errors.Is(err, hikoutei.ErrAckRejected) {
		t.Fatalf("replayed acknowledge: %v", err)
	}
	// Acknowledging the new conflict with its own fence lands.
	n := open[0]
	if res, err := x.AcknowledgeSystem(ctx, hikoutei.Acknowledge{ConflictID: n.ID, CanonicalRevision: n.CanonicalRevision,
		CandidateHash: n.CandidateHash, CandidateEpoch: n.CandidateEpoch}); err != nil || res.Outcome != hikoutei.AckApplied {
		t.Fatalf("second ack %+v %v", res, err)
	}
	x.drain()
	if x.cellOf(partInput, "1", "qty") != "5" {
		t.Fatalf("acknowledged reconcile: qty %s", x.cellOf(partInput, "1", "qty"))
	}
	// I23: the inbound read model (conflicts, candidates, evidence) rebuilds
	// identically from the log.
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

// legacyConflict appends a conflict.opened without candidate visible
// evidence, as an older build recorded them.
func legacyConflict(t *testing.T, x *synced) string {
	t.Helper()
	seedParts(t, x, 1)
	binding := layout.RowBindingID(partInput, "1")
	id := aggregates.ConflictID(binding, "qty", 0)
	stream := events.ConflictStream(id)
	mustT(t, x.e.AppendDecisions(aggregates.Decision{Stream: stream, Events: []events.Event{
		events.New(stream, events.ConflictOpened{ConflictID: id, Entity: "Part", ID: "1", Field: "qty", Tab: partInput, Anchor: "1",
			Binding: binding, CanonicalRevision: 1}, x.e.Now())}}))
	return id
}

func TestLegacyConflictWithoutVisibleEvidenceStaysUnresolved(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	id := legacyConflict(t, x)
	p := x.part("1")
	p.Qty = 42 // strictly raises the field's revision: still no guessed baseline
	commit(t, x.Store, p)
	res, err := x.AcknowledgeSystem(ctx, hikoutei.Acknowledge{ConflictID: id, CanonicalRevision: 2})
	if !errors.Is(err, hikoutei.ErrAckRejected) || res.Outcome != hikoutei.AckRejected {
		t.Fatalf("ack of a legacy conflict: %+v %v", res, err)
	}
	open, _ := x.Conflicts(ctx, hikoutei.ConflictOpen)
	if len(open) != 1 || open[0].ID != id || open[0].VisibleHash != "" {
		t.Fatalf("legacy conflict after a raise and an acknowledge: %+v", open)
	}
}

func TestDeletingAnEntityWithAnOpenConflictFailsClosedBeforeAnythingCommits(t *testing.T) {
	t.Parallel()
	x := openInbound(t, t.TempDir(), nil)
	bothChanged(t, x)
	before, counts := x.head(), x.outbox()
	u := x.Begin()
	mustT(t, u.Remove(&Part{ID: "1"}))
	mustT(t, u.Persist(&Part{ID: "3", Name: "same unit"}))
	_, err := u.Commit(ctx)
	if !errors.Is(err, hikoutei.ErrConflictOpen) || err.Error()[:len("entity_has_open_conflict")] != "entity_has_open_conflict" {
		t.Fatalf("remove with an open conflict: %v", err)
	}
	if x.head() != before || x.part("1") == nil || !maps.Equal(x.outbox(), counts) {
		t.Fatalf("something of the failed unit committed: %v", x.eventTypes(before))
	}
	if _, err := hikoutei.Get[Part](ctx, x.Store, "3"); !errors.Is(err, hikoutei.ErrNotFound) {
		t.Fatalf("the unit's other entity committed: %v", err)
	}
	// A legacy conflict is unresolved too.
	y := openInbound(t, t.TempDir(), nil)
	legacyConflict(t, y)
	u = y.Begin()
	mustT(t, u.Remove(&Part{ID: "1"}))
	if _, err := u.Commit(ctx); !errors.Is(err, hikoutei.ErrConflictOpen) {
		t.Fatalf("remove with a legacy conflict: %v", err)
	}
}

func TestC10_HumanEditDuringASystemWrite(t *testing.T) {
	t.Parallel()
	t.Run("different fields: both survive", func(t *testing.T) {
		x := openInbound(t, t.TempDir(), nil)
		commit(t, x.Store, &Part{ID: "7", Name: "Bolt", Qty: 5})
		x.drain()
		x.typeIn("7", "qty", "6")
		p := x.part("7")
		p.Name = "Bolt M6"
		commit(t, x.Store, p)
		x.drain()
		x.poll()
		x.drain()
		if p := x.part("7"); p.Name != "Bolt M6" || p.Qty != 6 {
			t.Fatalf("entity %+v", p)
		}
		if x.cellOf("Part_System", "7", "name") != "Bolt M6" || x.cellOf("Part_System", "7", "qty") != "6" || x.cellOf(partInput, "7", "qty") != "6" {
			t.Fatalf("system %v input %v", x.rowOf("Part_System", "7"), x.rowOf(partInput, "7"))
		}
		if open, _ := x.Conflicts(ctx, ""); len(open) != 0 {
			t.Fatalf("conflicts %+v", open)
		}
	})
	t.Run("same field: a conflict, nothing overwritten", func(t *testing.T) {
		x := openInbound(t, t.TempDir(), nil)
		c := bothChanged(t, x)
		x.drain()
		if x.cellOf(partInput, "1", "qty") != "9" || x.part("1").Qty != 5 || c.Field != "qty" {
			t.Fatalf("sheet %v entity %+v", x.rowOf(partInput, "1"), x.part("1"))
		}
	})
	t.Run("another user field of the row: the system value is written again, guarded", func(t *testing.T) {
		x := openInbound(t, t.TempDir(), nil)
		seedParts(t, x, 1)
		p := x.part("1")
		p.Qty = 5
		commit(t, x.Store, p)
		x.typeIn("1", "notes", "hand note")
		x.drain() // the qty write meets the edited row: not made
		x.poll()  // notes accepted; qty re-queued guarded by the row as read
		x.drain()
		if got := x.part("1"); got.Notes != "hand note" || got.Qty != 5 {
			t.Fatalf("entity %+v", got)
		}
		if x.cellOf(partInput, "1", "qty") != "5" || x.cellOf(partInput, "1", "notes") != "hand note" {
			t.Fatalf("input %v", x.rowOf(partInput, "1"))
		}
	})
}
