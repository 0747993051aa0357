package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// End-to-end tests of a resolution a person chooses in the
// Sync_Conflicts tab (I30): the poll reads the choice cell and runs the
// same fenced command as the API, with the sheet as the actor.

// choose sets the resolution cell of conflict id's Sync_Conflicts row,
// as a person picking from the dropdown.
func (x *synced) choose(id, choice string) {
	x.t.Helper()
	mustT(x.t, x.sheet.Person().Type(layout.ConflictsTab, x.cellRef(layout.ConflictsTab, id, layout.ConflictResolution), choice))
}

func TestI30_UseSheetChosenInSyncConflictsCommitsThePersonsValueWithTheSheetAsActor(t *testing.T) {
	notes := newNotes()
	x := openInbound(t, t.TempDir(), nil, notes.hook)
	c := bothChanged(t, x) // canonical qty 5, the person typed 9
	notes.next(t)
	x.drain()
	x.choose(c.ID, "use sheet")
	before := x.head()
	r := x.poll()
	if r.Choices[aggregates.ChoiceApplied] != 1 {
		t.Fatalf("poll %+v: the choice was not applied", r)
	}
	if p := x.part("1"); p.Qty != 9 {
		t.Fatalf("qty %d, want the person's 9", p.Qty)
	}
	if ps := x.persistedSince(before); len(ps) != 1 || ps[0].Actor != events.ActorSheet {
		t.Fatalf("committed %+v, want one change by the sheet", ps)
	}
	if ev := notes.next(t); ev.Resolution != string(events.ResolutionUseSheet) || ev.Actor != "sheet" {
		t.Fatalf("OnConflict got %+v", ev)
	}
	x.drain()
	if x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus) != "RESOLVED" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResult) != "use sheet (chosen in the sheet)" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResolution) != "use sheet" || x.cellOf(partSystem, "1", "qty") != "9" {
		t.Fatalf("audit row %v, system row %v", x.rowOf(layout.ConflictsTab, c.ID), x.rowOf(partSystem, "1"))
	}
	settled := x.head()
	if r := x.poll(); len(r.Choices) != 0 || x.head() != settled {
		t.Fatalf("a settled choice was decided again: %+v %v", r, x.eventTypes(settled))
	}
}

func TestI30_KeepSystemChosenInSyncConflictsRewritesThePersonsCell(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	x.choose(c.ID, "Keep System")
	if r := x.poll(); r.Choices[aggregates.ChoiceApplied] != 1 {
		t.Fatalf("poll %+v", r)
	}
	x.drain()
	if got := conflictByID(t, x, c.ID); got.Resolution != events.ResolutionAcknowledged || x.part("1").Qty != 5 ||
		x.cellOf(partInput, "1", "qty") != "5" {
		t.Fatalf("conflict %+v, input row %v", got, x.rowOf(partInput, "1"))
	}
}

func TestI30_AChoiceForAConflictThatMovedOnIsNeverAppliedTheRowShowsTheNewValueThenChosenAgain(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x) // the row shows sheet value 9
	x.drain()
	x.choose(c.ID, "use sheet")
	x.typeIn("1", "qty", "11") // the person types again before the poll
	before := x.head()
	r := x.poll()
	if r.Stats.Candidates != 1 || r.Choices[aggregates.ChoiceApplied] != 0 {
		t.Fatalf("poll %+v: want the new candidate and the choice not applied", r)
	}
	if p := x.part("1"); p.Qty != 5 {
		t.Fatalf("qty %d: a choice made against 9 was applied", p.Qty)
	}
	if types := x.eventTypes(before); types[events.TypeEntityPersisted] != 0 || types[events.TypeAcceptUserApplied] != 0 {
		t.Fatalf("appended %v", types)
	}
	x.drain()
	if r := x.poll(); r.Choices[aggregates.ChoiceApplied] != 0 || x.part("1").Qty != 5 {
		t.Fatalf("poll %+v after the row was refreshed: the old choice was applied", r)
	}
	if x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResolution) != "" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictSheetValue) != "11" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus) != "OPEN" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResult) == "" {
		t.Fatalf("audit row %v: want the choice cleared, the new value and a reason", x.rowOf(layout.ConflictsTab, c.ID))
	}
	x.choose(c.ID, "use sheet")
	if r := x.poll(); r.Choices[aggregates.ChoiceApplied] != 1 || x.part("1").Qty != 11 {
		t.Fatalf("poll %+v, qty %d: the choice made against 11 must apply", r, x.part("1").Qty)
	}
}

func TestI30_AChoiceForAConflictTheApplicationResolvedIsRejectedAndCleared(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	x.choose(c.ID, "use sheet")
	p := x.part("1")
	p.Qty = 6
	commit(t, x.Store, p) // system wins before the poll
	other := x.part("2")
	other.Qty = 7
	commit(t, x.Store, other)
	x.typeIn("2", "qty", "8") // another conflict keeps Sync_Conflicts watched
	x.drain()
	if r := x.poll(); r.Stats.Candidates != 1 {
		t.Fatalf("poll %+v: want the second conflict", r)
	}
	r := x.poll() // Sync_Conflicts is read while a conflict is open
	if r.Choices[aggregates.ChoiceRejected] != 1 {
		t.Fatalf("poll %+v", r)
	}
	x.drain()
	if got := x.part("1").Qty; got != 6 || x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResolution) != "" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResult) != "not applied: already resolved (system wins)" {
		t.Fatalf("qty %d, audit row %v", got, x.rowOf(layout.ConflictsTab, c.ID))
	}
}

func TestI30_TextThatIsNotAChoiceIsReportedOnceAndKept(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	x.choose(c.ID, "maybe later")
	if r := x.poll(); r.Choices[aggregates.ChoiceRejected] != 1 {
		t.Fatalf("poll %+v", r)
	}
	x.drain()
	if x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResolution) != "maybe later" ||
		x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResult) == "" {
		t.Fatalf("audit row %v: the person's text is kept, the reason shown", x.rowOf(layout.ConflictsTab, c.ID))
	}
	settled := x.head()
	if r := x.poll(); r.Choices[aggregates.ChoiceRejected] != 0 || x.head() != settled {
		t.Fatalf("the same text was reported again: %+v", r)
	}
	if got := conflictByID(t, x, c.ID); got.Status != hikoutei.ConflictOpen {
		t.Fatalf("conflict %+v", got)
	}
}

// conflictRowNumber is the 1-based Sync_Conflicts row showing conflict id.
func (x *synced) conflictRowNumber(id string) int {
	x.t.Helper()
	rows := x.rows(layout.ConflictsTab)
	for i, r := range rows {
		if anchorOf(rows[0], r) == id {
			return i + 1
		}
	}
	x.t.Fatalf("no Sync_Conflicts row for %s", id)
	return 0
}

func TestAnOpenConflictsRowAPersonDeletedIsShownAgain(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	mustT(t, x.sheet.Person().DeleteRows(layout.ConflictsTab, x.conflictRowNumber(c.ID), 1))
	if r := x.poll(); r.Choices[aggregates.RowRestored] != 1 {
		t.Fatalf("poll %+v: the deleted row was not restored", r)
	}
	x.drain()
	if x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictStatus) != "OPEN" || x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictSheetValue) != "9" {
		t.Fatalf("restored row %v", x.rowOf(layout.ConflictsTab, c.ID))
	}
	settled := x.head()
	if r := x.poll(); len(r.Choices) != 0 || x.head() != settled {
		t.Fatalf("a restored row was decided again: %+v", r)
	}
}

func TestAChoiceInAPastedCopyOfAConflictsRowIsNeverAppliedAndTheCopyIsRemoved(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	at, err := x.sheet.Person().PasteRow(layout.ConflictsTab, x.conflictRowNumber(c.ID))
	mustT(t, err)
	col := slices.Index(x.rows(layout.ConflictsTab)[0], layout.ConflictResolution)
	mustT(t, x.sheet.Person().Type(layout.ConflictsTab, fmt.Sprintf("%c%d", 'A'+col, at), "use sheet"))
	if r := x.poll(); r.Choices[aggregates.RowCopyRemoved] != 1 || r.Choices[aggregates.ChoiceApplied] != 0 {
		t.Fatalf("poll %+v: want one copy removed and nothing applied", r)
	}
	x.drain()
	if got := x.part("1").Qty; got != 5 {
		t.Fatalf("qty %d: a choice on a duplicated row was applied", got)
	}
	if n := len(x.rows(layout.ConflictsTab)); n != 2 {
		t.Fatalf("Sync_Conflicts has %d rows, want the header and one row", n)
	}
	if got := conflictByID(t, x, c.ID); got.Status != hikoutei.ConflictOpen {
		t.Fatalf("conflict %+v", got)
	}
}

func TestI30_AFormulaInTheChoiceCellIsNeverAppliedWhateverItShows(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	c := bothChanged(t, x)
	x.drain()
	ref := x.cellRef(layout.ConflictsTab, c.ID, layout.ConflictResolution)
	mustT(t, x.sheet.Person().TypeFormula(layout.ConflictsTab, ref, `="use "&"sheet"`))
	if r := x.poll(); r.Choices[aggregates.ChoiceRejected] != 1 || r.Choices[aggregates.ChoiceApplied] != 0 {
		t.Fatalf("poll %+v", r)
	}
	x.drain()
	if got := x.part("1").Qty; got != 5 || !strings.HasPrefix(x.cellOf(layout.ConflictsTab, c.ID, layout.ConflictResult), "not applied: a formula") {
		t.Fatalf("qty %d, audit row %v", got, x.rowOf(layout.ConflictsTab, c.ID))
	}
	if got := conflictByID(t, x, c.ID); got.Status != hikoutei.ConflictOpen {
		t.Fatalf("conflict %+v", got)
	}
}
