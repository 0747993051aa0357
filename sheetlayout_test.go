package hikoutei_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/api/option"
	"google.golang.org/api/sheets/v4"
	"zombiezen.com/go/sqlite"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// The sheet follows a change of the entities' shape live: a store synced
// with Rec{id pk, name, notes user} (records a and b on the sheet) is
// reopened with another struct, commits record c, and after ten dispatch
// passes every tab shows the new layout with every row equal to canonical
// state (an anti-entropy pass then finds nothing to correct).

type recV1 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

// shapeRig is one store directory synced to one emulated sheet across
// reopenings.
type shapeRig struct {
	t     *testing.T
	dir   string
	sheet *hikouteitest.Sheet
	s     *hikoutei.Store
	h     *hikouteitest.Harness
}

var bg = context.Background()

// newShapeRig syncs records a ("A") and b ("B") of recV1 and closes the
// store.
func newShapeRig(t *testing.T) *shapeRig {
	t.Helper()
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "A"}, &recV1{ID: "b", Name: "B"})
	r.h.Drain(bg)
	r.close()
	return r
}

// open opens the store with defs (no dispatch yet: a harness only
// provisions).
func (r *shapeRig) open(defs ...hikoutei.EntityDef) {
	r.t.Helper()
	s, err := hikoutei.Open(bg, r.dir, hikoutei.Options{Sync: r.sheet.SyncOptions(), NoAdmin: true}, defs...)
	if err != nil {
		r.t.Fatal(err)
	}
	r.s = s
	r.t.Cleanup(func() { s.Close() })
	r.h = hikouteitest.New(r.t, s)
}

func (r *shapeRig) close() {
	r.t.Helper()
	if err := r.s.Close(); err != nil {
		r.t.Fatal(err)
	}
}

func (r *shapeRig) persist(recs ...any) {
	r.t.Helper()
	u := r.s.Begin()
	for _, rec := range recs {
		if err := u.Persist(rec); err != nil {
			r.t.Fatal(err)
		}
	}
	if _, err := u.Commit(bg); err != nil {
		r.t.Fatal(err)
	}
}

// passes runs n dispatch passes (as the reproduction did).
func (r *shapeRig) passes(n int) {
	r.t.Helper()
	for range n {
		if _, err := r.h.Dispatch(bg); err != nil {
			r.t.Fatalf("dispatch: %v", err)
		}
	}
}

// shows checks the header row of tab and each listed row (by anchor, the
// last layout column), as the sheet displays them.
func (r *shapeRig) shows(tab string, header []string, rows map[string][]string) {
	r.t.Helper()
	got, err := r.sheet.Person().Displayed(tab)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(got) == 0 || !slices.Equal(trimRow(got[0]), header) {
		r.t.Fatalf("%s header %q, want %q", tab, got, header)
	}
	anchor := slices.Index(header, "__hikoutei_row_id")
	seen := map[string]int{}
	for _, row := range got[1:] {
		row = trimRow(row)
		if len(row) == 0 {
			continue
		}
		if anchor >= len(row) {
			r.t.Fatalf("%s row without an anchor: %q", tab, row)
		}
		id := row[anchor]
		seen[id]++
		if want, ok := rows[id]; ok && !slices.Equal(row, trimRow(want)) {
			r.t.Fatalf("%s row %s = %q, want %q", tab, id, row, want)
		}
	}
	for id := range rows {
		if seen[id] != 1 {
			r.t.Fatalf("%s shows row %s %d times: %q", tab, id, seen[id], got)
		}
	}
}

func trimRow(row []string) []string {
	for len(row) > 0 && row[len(row)-1] == "" {
		row = row[:len(row)-1]
	}
	return row
}

// converged checks that nothing waits or failed, then that an
// anti-entropy pass finds every tab equal to canonical state with every
// row shown (sync health ok on every tab, nothing diverged or queued).
func (r *shapeRig) converged() {
	r.t.Helper()
	out := r.h.Outbox()
	if out["failed"] != 0 || r.h.Unsettled() != 0 {
		r.t.Fatalf("outbox after the passes: %v", out)
	}
	if _, err := r.h.Reconcile(bg); err != nil {
		r.t.Fatal(err)
	}
	h := r.s.Health()
	if h.Sync != nil || h.SyncHealth == nil {
		r.t.Fatalf("sync health: %v", h.Sync)
	}
	for _, tab := range h.SyncHealth.Tabs {
		if tab.State != hikoutei.SyncOK || tab.Diverged != 0 || tab.Pending != 0 {
			r.t.Fatalf("tab %s after an anti-entropy pass: %+v", tab.Tab, tab)
		}
	}
}

// tabHealth is tab's sync health now.
func (r *shapeRig) tabHealth(tab string) hikoutei.TabHealth {
	r.t.Helper()
	h := r.s.Health()
	if h.SyncHealth == nil {
		r.t.Fatalf("no sync health: %v", h.Sync)
	}
	for _, th := range h.SyncHealth.Tabs {
		if th.Tab == tab {
			return th
		}
	}
	r.t.Fatalf("no health for tab %s", tab)
	return hikoutei.TabHealth{}
}

const anchorCol = "__hikoutei_row_id"

type recPop struct {
	ID    string  `hikoutei:"id,pk"`
	Name  string  `hikoutei:"name"`
	Pop   float64 `hikoutei:"pop"`
	Notes string  `hikoutei:"notes,user"`
}

// Add a field: the System tab gets the column where the declaration puts
// it, filled from canonical state (the records written before read its
// zero value); the Input tab is untouched.
func TestSheetLayoutAddAField(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recPop]("Rec"))
	if th := r.tabHealth("Rec_System"); th.State != hikoutei.SyncMigrating {
		t.Fatalf("Rec_System before its migration: %+v", th)
	}
	r.persist(&recPop{ID: "c", Name: "C", Pop: 1.5})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "pop", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "0", "", "a"}, "b": {"b", "B", "0", "", "b"}, "c": {"c", "C", "1.5", "", "c"}})
	r.shows("Rec_Input", []string{"id", "notes", anchorCol}, map[string][]string{"a": {"a", "", "a"}, "c": {"c", "", "c"}})
	r.converged()
}

type recTag struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
	Tag   string `hikoutei:"tag,user"`
}

// Add a user field: both tabs get the column (before the anchor on Input).
func TestSheetLayoutAddAUserField(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.persist(&recTag{ID: "c", Name: "C", Tag: "t"})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "notes", "tag", anchorCol}, map[string][]string{
		"a": {"a", "A", "", "", "a"}, "c": {"c", "C", "", "t", "c"}})
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{
		"a": {"a", "", "", "a"}, "b": {"b", "", "", "b"}, "c": {"c", "", "t", "c"}})
	r.converged()
}

type recNoName struct {
	ID    string `hikoutei:"id,pk"`
	Notes string `hikoutei:"notes,user"`
}

// Drop a field: its column leaves the System tab.
func TestSheetLayoutDropAField(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recNoName]("Rec"))
	r.persist(&recNoName{ID: "c", Notes: "n"})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "notes", anchorCol}, map[string][]string{
		"a": {"a", "", "a"}, "b": {"b", "", "b"}, "c": {"c", "n", "c"}})
	r.shows("Rec_Input", []string{"id", "notes", anchorCol}, map[string][]string{"c": {"c", "n", "c"}})
	r.converged()
}

type recNameUser struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name,user"`
	Notes string `hikoutei:"notes,user"`
}

// A field that becomes user-editable appears on the Input tab with its
// canonical values, and people's edits of it are accepted.
func TestSheetLayoutFieldBecomesUserEditable(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recNameUser]("Rec"))
	r.persist(&recNameUser{ID: "c", Name: "C"})
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "name", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "", "a"}, "b": {"b", "B", "", "b"}, "c": {"c", "C", "", "c"}})
	r.converged()
	if err := r.sheet.Person().Type("Rec_Input", "B2", "A by hand"); err != nil {
		t.Fatal(err)
	}
	if res, err := r.h.Poll(bg); err != nil || res.Stats.Accepted != 1 {
		t.Fatalf("poll: %+v %v", res.Stats, err)
	}
	if got, err := hikoutei.Get[recNameUser](bg, r.s, "a"); err != nil || got.Name != "A by hand" {
		t.Fatalf("a = %+v %v", got, err)
	}
}

type recNotesSystem struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes"`
	Tag   string `hikoutei:"tag,user"`
}

// A field that stops being user-editable leaves the Input tab (its cells
// held nothing people typed that the store did not import: the column
// is removed).
func TestSheetLayoutFieldStopsBeingUserEditable(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recNotesSystem]("Rec"))
	r.persist(&recNotesSystem{ID: "c", Name: "C", Notes: "n", Tag: "t"})
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "tag", anchorCol}, map[string][]string{
		"a": {"a", "", "a"}, "b": {"b", "", "b"}, "c": {"c", "t", "c"}})
	r.shows("Rec_System", []string{"id", "name", "notes", "tag", anchorCol}, map[string][]string{"c": {"c", "C", "n", "t", "c"}})
	r.converged()
	if th := r.tabHealth("Rec_Input"); len(th.Retired) != 0 {
		t.Fatalf("a column with nothing unimported was retired: %+v", th)
	}
}

type recReordered struct {
	ID    string `hikoutei:"id,pk"`
	Notes string `hikoutei:"notes,user"`
	Name  string `hikoutei:"name"`
}

// Reorder: the columns move (cells with them) to the declared order.
func TestSheetLayoutReorder(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recReordered]("Rec"))
	r.persist(&recReordered{ID: "c", Name: "C", Notes: "n"})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "notes", "name", anchorCol}, map[string][]string{
		"a": {"a", "", "A", "a"}, "b": {"b", "", "B", "b"}, "c": {"c", "n", "C", "c"}})
	r.converged()
}

type cityRec struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name,user"`
}

// A second entity: its tabs are created; Rec's are untouched.
func TestSheetLayoutSecondEntity(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"), hikoutei.Entity[cityRec]("City"))
	r.persist(&recV1{ID: "c", Name: "C"}, &cityRec{ID: "x", Name: "X"})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{"a": {"a", "A", "", "a"}, "c": {"c", "C", "", "c"}})
	r.shows("City_Input", []string{"id", "name", anchorCol}, map[string][]string{"x": {"x", "X", "x"}})
	r.converged()
}

// Health says migrating while the tab waits for its migration (never ok)
// and ok once it follows the new layout.
func TestSheetLayoutHealthMigratingThenOK(t *testing.T) {
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	for _, tab := range []string{"Rec_System", "Rec_Input"} {
		if th := r.tabHealth(tab); th.State != hikoutei.SyncMigrating {
			t.Fatalf("%s before its migration: %+v", tab, th)
		}
	}
	if h := r.s.Health(); h.SyncHealth.State == hikoutei.SyncOK {
		t.Fatalf("the spreadsheet is ok while tabs migrate: %+v", h.SyncHealth)
	}
	r.passes(1)
	for _, tab := range []string{"Rec_System", "Rec_Input"} {
		if th := r.tabHealth(tab); th.State != hikoutei.SyncOK {
			t.Fatalf("%s after its migration: %+v", tab, th)
		}
	}
	r.converged()
}

// A header a person changed is no older layout: it stays blocked with
// sheet_header_drift, as before, and nothing is written to the tab.
func TestSheetLayoutHeaderAPersonChangedStaysBlocked(t *testing.T) {
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_System", "B1", "Name"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recPop]("Rec"))
	r.passes(3)
	if th := r.tabHealth("Rec_System"); th.State != hikoutei.SyncBlocked || th.Reason != hikoutei.ReasonHeaderDrift {
		t.Fatalf("Rec_System with a person's header: %+v", th)
	}
	r.shows("Rec_System", []string{"id", "Name", "notes", anchorCol}, map[string][]string{"a": {"a", "A", "", "a"}})
}

// Writes queued under the old layout (committed, not yet sent, when the
// store closed) are sent after the migration in the new one: renamed,
// dropped, converted; none fails, and each row's writes keep their order.
func TestSheetLayoutEffectsQueuedUnderTheOldLayout(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "A2", Notes: "n1"})
	r.persist(&recV1{ID: "a", Name: "A3", Notes: "n2"}, &recV1{ID: "d", Name: "D"})
	r.close()
	r.open(hikoutei.Entity[recNoName]("Rec"))
	r.passes(10)
	r.shows("Rec_System", []string{"id", "notes", anchorCol}, map[string][]string{"a": {"a", "n2", "a"}, "d": {"d", "", "d"}})
	r.shows("Rec_Input", []string{"id", "notes", anchorCol}, map[string][]string{"a": {"a", "n2", "a"}, "d": {"d", "", "d"}})
	r.converged()
}

// I35: a person's edit of a user cell made against the old layout, before
// the change, is polled under that layout first: accepted into the field
// it showed, and shown in its column afterwards.
func TestI35_EditBeforeTheChangeIsPolledUnderTheOldLayout(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "typed before"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(10)
	if got, err := hikoutei.Get[recTag](bg, r.s, "a"); err != nil || got.Notes != "typed before" {
		t.Fatalf("a = %+v %v", got, err)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "typed before", "", "a"}})
	r.shows("Rec_System", []string{"id", "name", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "A", "typed before", "", "a"}})
	r.converged()
}

type recNoNotes struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
	Tag  string `hikoutei:"tag,user"`
}

// I35: a person's value in a user column whose field is dropped, never
// imported, is not deleted: the column stays after the anchor as "notes
// (retired)", and health (and status) name it.
func TestI35_UnimportedValueInADroppedUserColumnIsRetired(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B3", "keep me"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recNoNotes]("Rec"))
	r.persist(&recNoNotes{ID: "c", Name: "C", Tag: "t"})
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "tag", anchorCol, "notes (retired)"}, map[string][]string{
		"a": {"a", "", "a"}, "b": {"b", "", "b", "keep me"}, "c": {"c", "t", "c"}})
	r.shows("Rec_System", []string{"id", "name", "tag", anchorCol}, map[string][]string{"b": {"b", "B", "", "b"}})
	th := r.tabHealth("Rec_Input")
	if !slices.Equal(th.Retired, []string{"notes (retired)"}) || th.Notice != hikoutei.ReasonColumnRetired {
		t.Fatalf("health does not name the retired column: %+v", th)
	}
	r.converged()
	conn, err := engine.Of(r.s).ReadConn(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Of(r.s).PutConn(conn)
	all, err := engine.ReadSyncHealth(conn, time.Now())
	if err != nil || len(all) != 1 {
		t.Fatalf("health from the read model: %v %v", all, err)
	}
	for _, th := range all[0].Tabs {
		if th.Tab == "Rec_Input" && !slices.Equal(th.Retired, []string{"notes (retired)"}) {
			t.Fatalf("the read model's health does not name the retired column: %+v", th)
		}
	}
}

// I35: a person who edits a cell while the migration's batchUpdate is on
// its way (after its read, before it lands) gets a normal outcome: the
// cell moves with its column and the next poll accepts the edit.
func TestI35_EditDuringTheMigrationGetsANormalOutcome(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	person := r.sheet.Person()
	r.sheet.Emulator.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := person.Type("Rec_Input", "B2", "typed meanwhile"); err != nil {
			t.Error(err)
		}
	}})
	r.passes(1)
	if n := r.sheet.Emulator.PendingFaults(); n != 0 {
		t.Fatalf("the migration wrote nothing: %d faults left", n)
	}
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "typed meanwhile", "", "a"}})
	if res, err := r.h.Poll(bg); err != nil || res.Stats.Accepted != 1 {
		t.Fatalf("poll after the migration: %+v %v", res.Stats, err)
	}
	if got, err := hikoutei.Get[recTag](bg, r.s, "a"); err != nil || got.Notes != "typed meanwhile" {
		t.Fatalf("a = %+v %v", got, err)
	}
	r.passes(3)
	r.shows("Rec_System", []string{"id", "name", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "A", "typed meanwhile", "", "a"}})
	r.converged()
}

// I35: a person who renames a header cell while the migration's
// batchUpdate is on its way keeps the header they typed: the migration
// writes only the header cells it changes, and the tab is blocked
// (sheet_header_drift) as any tab whose header a person changed.
func TestI35_HeaderEditDuringTheMigrationIsKeptAndBlocks(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	person := r.sheet.Person()
	r.sheet.Emulator.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := person.Type("Rec_Input", "B1", "Notes!"); err != nil {
			t.Error(err)
		}
	}})
	r.passes(1)
	if n := r.sheet.Emulator.PendingFaults(); n != 0 {
		t.Fatalf("the migration wrote nothing: %d faults left", n)
	}
	blocked := func(when string) {
		t.Helper()
		got, err := person.Displayed("Rec_Input")
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"id", "Notes!", "tag", anchorCol}; len(got) == 0 || !slices.Equal(trimRow(got[0]), want) {
			t.Fatalf("%s: Rec_Input header %q, want %q", when, got[0], want)
		}
		if th := r.tabHealth("Rec_Input"); th.State != hikoutei.SyncBlocked || th.Reason != hikoutei.ReasonHeaderDrift {
			t.Fatalf("%s: Rec_Input health %+v, want blocked by header drift", when, th)
		}
	}
	blocked("after the migration")
	r.passes(3)
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.h.Reconcile(bg); err != nil {
		t.Fatal(err)
	}
	blocked("after more passes and an anti-entropy pass")
}

// I35: an open conflict and its row carry over the migration: the
// person's value stays in its cell (moved with its column), the conflict
// stays open, and keeping the system's value afterwards rewrites the cell
// (the row's guard followed the migration).
func TestI35_OpenConflictCarriesOverTheMigration(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "A", Notes: "x"})
	r.h.Drain(bg)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "mine"); err != nil {
		t.Fatal(err)
	}
	r.persist(&recV1{ID: "a", Name: "A", Notes: "theirs"})
	r.passes(2) // the Input write meets the person's edit: a conflict for the poll to examine
	if res, err := r.h.Poll(bg); err != nil || res.Stats.Candidates != 1 {
		t.Fatalf("poll: %+v %v", res.Stats, err)
	}
	r.passes(2) // the conflicted cell gets its note
	if notes := r.notes("Rec_Input!A2:D2"); notes[1] == "" {
		t.Fatalf("no note on the conflicted cell before the change: %q", notes)
	}
	r.close()
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "mine", "", "a"}})
	if notes := r.notes("Rec_Input!A2:D2"); notes[1] == "" || notes[2] != "" {
		t.Fatalf("the conflict's note did not follow its cell: %q", notes)
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open conflicts after the migration: %+v %v", open, err)
	}
	if _, err := r.h.Poll(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.s.ResolveConflict(bg, open[0].ID, hikoutei.KeepSystem); err != nil {
		t.Fatal(err)
	}
	r.passes(5)
	r.shows("Rec_Input", []string{"id", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "theirs", "", "a"}})
	if res, err := r.h.Poll(bg); err != nil {
		t.Fatalf("poll: %+v %v", res, err)
	}
	r.converged()
}

// recordShapeChange appends to the closed store's log what Open records
// for a declared change (schema.changed, then the new schema.declared)
// and, as a migration would, the records' values under the new shape:
// the shape change helper's work, written by hand here so the sheet's
// side is tested on its own.
func recordShapeChange(t *testing.T, dir string, change events.SchemaChanged, shape events.EntityShape, values map[string]map[string]any) {
	t.Helper()
	w, err := events.OpenWriter(dir, events.WriterOptions{AcquireWait: -1, HeartbeatInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	now := time.Now()
	v, err := w.Log().StreamVersion(events.SchemaStream)
	if err != nil {
		t.Fatal(err)
	}
	unit := events.Unit{Streams: []events.StreamAppend{{Stream: events.SchemaStream, ExpectedVersion: v, Events: []events.Event{
		events.New(events.SchemaStream, change, now), events.New(events.SchemaStream, events.SchemaDeclared{Entities: []events.EntityShape{shape}}, now)}}}}
	for _, id := range slices.Sorted(maps.Keys(values)) {
		stream := events.EntityStream(shape.Name, id)
		ev, err := w.Log().StreamVersion(stream)
		if err != nil {
			t.Fatal(err)
		}
		revs := map[string]uint64{}
		for f := range values[id] {
			revs[f] = 9
		}
		p := events.EntityPersisted{Entity: shape.Name, ID: id, Fields: values[id], Revisions: revs, Actor: "migration:Rec/v2"}
		unit.Streams = append(unit.Streams, events.StreamAppend{Stream: stream, ExpectedVersion: ev, Events: []events.Event{events.New(stream, p, now)}})
	}
	res, err := w.Append(unit)
	if err == nil {
		err = res[0].Err
	}
	if err == nil {
		err = w.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
}

type recTitle struct {
	ID    string `hikoutei:"id,pk"`
	Title string `hikoutei:"title"`
	Notes string `hikoutei:"notes,user"`
}

// Rename (declared with `hikoutei:"title,was=name"` once the shape change
// classification records it): the column keeps its cells under its new
// header. The rename is recorded by hand here (recordShapeChange).
func TestSheetLayoutRename(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	shape := events.EntityShape{Name: "Rec", PK: "id", Fields: []events.FieldShape{
		{Name: "title", Kind: events.KindString, Owner: events.OwnerSystem}, {Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}}}
	recordShapeChange(t, r.dir, events.SchemaChanged{Changes: []events.ShapeChange{
		{Entity: "Rec", Kind: events.ChangeFieldRenamed, Field: "title", From: "name", To: "title", Class: events.ClassCompatible}}},
		shape, map[string]map[string]any{"a": {"title": "A"}, "b": {"title": "B"}})
	r.open(hikoutei.Entity[recTitle]("Rec"))
	r.persist(&recTitle{ID: "c", Title: "C"})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "title", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "", "a"}, "b": {"b", "B", "", "b"}, "c": {"c", "C", "", "c"}})
	r.converged()
}

type recNameFloat struct {
	ID    string  `hikoutei:"id,pk"`
	Name  float64 `hikoutei:"name"`
	Notes string  `hikoutei:"notes,user"`
}

// Retype (text → float64, every recorded value converting): the column's
// cells are rewritten from canonical state as numbers. The retype and the
// converted values are recorded by hand here (recordShapeChange).
func TestSheetLayoutRetype(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "1.5"}, &recV1{ID: "b", Name: "2"})
	r.h.Drain(bg)
	r.close()
	shape := events.EntityShape{Name: "Rec", PK: "id", Fields: []events.FieldShape{
		{Name: "name", Kind: events.KindFloat, Owner: events.OwnerSystem}, {Name: "notes", Kind: events.KindString, Owner: events.OwnerUser}}}
	recordShapeChange(t, r.dir, events.SchemaChanged{Changes: []events.ShapeChange{
		{Entity: "Rec", Kind: events.ChangeFieldRetyped, Field: "name", From: "string", To: "float", Class: events.ClassCompatible}}},
		shape, map[string]map[string]any{"a": {"name": 1.5}, "b": {"name": 2.0}})
	r.open(hikoutei.Entity[recNameFloat]("Rec"))
	r.persist(&recNameFloat{ID: "c", Name: 3.25})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{
		"a": {"a", "1.5", "", "a"}, "b": {"b", "2", "", "b"}, "c": {"c", "3.25", "", "c"}})
	vr, err := r.sheetService().Spreadsheets.Values.Get(hikouteitest.SpreadsheetID, "Rec_System!B2:B3").ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || len(vr.Values) != 2 || vr.Values[0][0] != 1.5 || vr.Values[1][0] != float64(2) {
		t.Fatalf("the retyped cells are not numbers: %#v %v", vr.Values, err)
	}
	if got, err := hikoutei.Get[recNameFloat](bg, r.s, "a"); err != nil || got.Name != 1.5 {
		t.Fatalf("a = %+v %v", got, err)
	}
	r.converged()
}

func (r *shapeRig) sheetService() *sheets.Service {
	r.t.Helper()
	svc, err := sheets.NewService(bg, option.WithEndpoint(r.sheet.URL), option.WithoutAuthentication())
	if err != nil {
		r.t.Fatal(err)
	}
	return svc
}

// notes reads the notes of the cells of one row range (A1), by column.
func (r *shapeRig) notes(rng string) []string {
	r.t.Helper()
	ss, err := r.sheetService().Spreadsheets.Get(hikouteitest.SpreadsheetID).Ranges(rng).IncludeGridData(true).Do()
	if err != nil {
		r.t.Fatal(err)
	}
	out := make([]string, 8)
	for _, d := range ss.Sheets[0].Data {
		for _, rd := range d.RowData {
			for i, c := range rd.Values {
				out[i] = c.Note
			}
		}
	}
	return out
}

// I35: a person's value in a user column whose field stops being
// editable, never imported, is kept the same way (the System tab shows
// the field's canonical value).
func TestI35_UnimportedValueInAColumnNoLongerEditableIsRetired(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "keep me too"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recNotesSystem]("Rec"))
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "tag", anchorCol, "notes (retired)"}, map[string][]string{
		"a": {"a", "", "a", "keep me too"}, "b": {"b", "", "b"}})
	r.shows("Rec_System", []string{"id", "name", "notes", "tag", anchorCol}, map[string][]string{"a": {"a", "A", "", "", "a"}})
	if th := r.tabHealth("Rec_Input"); !slices.Equal(th.Retired, []string{"notes (retired)"}) {
		t.Fatalf("health does not name the retired column: %+v", th)
	}
	r.converged()
}

// A tool reading a closed store (`hikoutei status`) sees a tab that still
// shows an older layout as migrating too: from the read model and the
// log's declarations, without the running store.
func TestSheetLayoutMigratingWhileClosedToo(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recPop]("Rec"))
	r.close()
	l, err := events.OpenLog(filepath.Join(r.dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hist, err := events.ReadShapeHistory(l)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := sqlite.OpenConn(filepath.Join(r.dir, "read.sqlite"), sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	all, err := engine.ReadSyncHealth(conn, time.Now(), hist)
	if err != nil || len(all) != 1 {
		t.Fatalf("health: %v %v", all, err)
	}
	states := map[string]engine.SyncState{}
	for _, th := range all[0].Tabs {
		states[th.Tab] = th.State
	}
	if states["Rec_System"] != engine.SyncMigrating || states["Rec_Input"] == engine.SyncMigrating {
		t.Fatalf("tab states from the read model and the log: %v", states)
	}
}

type recTitleWas struct {
	ID    string `hikoutei:"id,pk"`
	Title string `hikoutei:"title,was=name"`
	Notes string `hikoutei:"notes,user"`
}

// Rename declared in the tag, as applications write it: recorded by the
// shape change classification at Open, then followed by the sheet.
func TestSheetLayoutRenameDeclaredInTheTag(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	s, err := hikoutei.Open(bg, r.dir, hikoutei.Options{Sync: r.sheet.SyncOptions(), NoAdmin: true}, hikoutei.Entity[recTitleWas]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	r.open(hikoutei.Entity[recTitleWas]("Rec"))
	r.persist(&recTitleWas{ID: "c", Title: "C"})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "title", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "", "a"}, "b": {"b", "B", "", "b"}, "c": {"c", "C", "", "c"}})
	r.converged()
}

type recRankInt struct {
	ID    string `hikoutei:"id,pk"`
	Rank  int64  `hikoutei:"rank"`
	Notes string `hikoutei:"notes,user"`
}

type recRankFloat struct {
	ID    string  `hikoutei:"id,pk"`
	Rank  float64 `hikoutei:"rank"`
	Notes string  `hikoutei:"notes,user"`
}

// A widening retype (int → float) declared by the struct alone: the
// header is unchanged, so the tab is known to wait for its migration from
// the log (its layout's kinds changed after it showed rows); its cells
// are rewritten from canonical state.
func TestSheetLayoutRetypeIntToFloat(t *testing.T) {
	t.Parallel()
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recRankInt]("Rec"))
	r.persist(&recRankInt{ID: "a", Rank: 3}, &recRankInt{ID: "b", Rank: 1 << 40})
	r.h.Drain(bg)
	r.close()
	r.open(hikoutei.Entity[recRankFloat]("Rec"))
	if th := r.tabHealth("Rec_System"); th.State != hikoutei.SyncMigrating {
		t.Fatalf("Rec_System before its migration: %+v", th)
	}
	r.persist(&recRankFloat{ID: "c", Rank: 2.5})
	r.passes(10)
	r.shows("Rec_System", []string{"id", "rank", "notes", anchorCol}, map[string][]string{"a": {"a", "3", "", "a"}, "c": {"c", "2.5", "", "c"}})
	if got, err := hikoutei.Get[recRankFloat](bg, r.s, "b"); err != nil || got.Rank != 1<<40 {
		t.Fatalf("b = %+v %v", got, err)
	}
	r.converged()
}

type recByCode struct {
	Code  string `hikoutei:"code,pk"`
	Ref   string `hikoutei:"ref"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

// I35: a person's value typed into the Input row of a record that a
// migration then moves to another key (the old record removed) is never
// deleted with the row: the row's delete meets the person's cell and the
// row stays for review.
func TestI35_AnUnimportedEditOnARowAMigrationMovesIsKeptForReview(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B2", "typed before"); err != nil {
		t.Fatal(err)
	}
	m := hikoutei.Migrate[recV1, recByCode]("Rec", "by-code", func(o recV1) (recByCode, error) {
		return recByCode{Code: "k" + o.ID, Ref: o.ID, Name: o.Name, Notes: o.Notes}, nil
	})
	s, err := hikoutei.Open(bg, r.dir, hikoutei.Options{Sync: r.sheet.SyncOptions(), NoAdmin: true, Migrations: []hikoutei.Migration{m}},
		hikoutei.Entity[recByCode]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	t.Cleanup(func() { s.Close() })
	r.h = hikouteitest.New(t, s)
	r.passes(10)
	r.h.Reconcile(bg)
	r.passes(10)
	got, err := r.sheet.Person().Displayed("Rec_Input")
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, row := range got {
		kept = kept || slices.Contains(row, "typed before")
	}
	if !kept {
		t.Fatalf("the person's value is gone from Rec_Input: %q", got)
	}
	if out := r.h.Outbox(); out["conflict"] != 1 {
		t.Fatalf("the row's delete did not settle as left for review: %v", out)
	}
}

// I35: a record created under the old shape whose append was not sent
// before the change is appended in the new layout with canonical state
// in every column, those new to the tab included (here name, which
// people may now edit, on the Input tab).
func TestI35_AnAppendQueuedUnderTheOldLayoutFillsTheNewColumns(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "c", Name: "C", Notes: "n1"})
	r.close()
	r.open(hikoutei.Entity[recNameUser]("Rec"))
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "name", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "", "a"}, "b": {"b", "B", "", "b"}, "c": {"c", "C", "n1", "c"}})
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{"c": {"c", "C", "n1", "c"}})
	r.converged()
}

// I35: the records written before a field was added read its zero value,
// and hold it: a query by that value finds them, and the sheet shows it
// (not a blank the records do not read).
func TestI35_ANewFieldsZeroValueIsWhatQueriesAndTheSheetSee(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recPop]("Rec"))
	got, err := hikoutei.Find[recPop](bg, r.s, hikoutei.Where("pop", 0.0), hikoutei.OrderBy("id"))
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("Find where pop = 0: %v %v", got, err)
	}
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "pop", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "0", "", "a"}, "b": {"b", "B", "0", "", "b"}})
	r.converged()
}

// I35: a tab found already in the current layout while the store waited
// for its migration (here: the shape changed and changed back before the
// tab followed) is recovered; a row of a record removed meanwhile that
// holds a person's unimported cell keeps a guard its delete does not
// meet, so the row stays for review, the person's value with it.
func TestI35_ARecoveredTabNeverTakesAPersonsCellAsTheStoresWrite(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B3", "keep me"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec"))
	u := r.s.Begin()
	if err := u.Remove(&recV1{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "notes", anchorCol}, map[string][]string{"a": {"a", "", "a"}, "b": {"b", "keep me", "b"}})
	if out := r.h.Outbox(); out["conflict"] != 1 {
		t.Fatalf("the row's delete did not settle as left for review: %v", out)
	}
}

// I35: a write of a newer shape (here a migration's output) never merges
// into a System write still queued under an older one: each is sent in
// the current layout converted from its own shape, so a retype and its
// way back (text → float → text) show the record's value, never a marker
// of a value the column cannot hold.
func TestI35_AWriteOfANewerShapeNeverMergesIntoOneQueuedUnderAnOlder(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "A", Notes: "n1"}) // queued, not sent
	r.close()
	m := hikoutei.Migrate[recV1, recNameFloat]("Rec", "len", func(o recV1) (recNameFloat, error) {
		return recNameFloat{ID: o.ID, Name: float64(len(o.Name)) + 6, Notes: o.Notes}, nil
	})
	s, err := hikoutei.Open(bg, r.dir, hikoutei.Options{Sync: r.sheet.SyncOptions(), NoAdmin: true, Migrations: []hikoutei.Migration{m}},
		hikoutei.Entity[recNameFloat]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{"a": {"a", "7", "n1", "a"}, "b": {"b", "7", "", "b"}})
	r.converged()
}

type recOnlyName struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
}

// I35: a field dropped and added again before the tab followed the drop
// is another field under the same name: the tab, whose header shows the
// current names, is migrated from the layout it does show — the old
// column's cells are not the new field's. On the System tab the records
// show the new field's zero value, not the dropped field's values.
func TestI35_AFieldDroppedAndAddedAgainIsANewColumnOnTheSystemTab(t *testing.T) {
	t.Parallel()
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recPop]("Rec"))
	r.persist(&recPop{ID: "a", Name: "A", Pop: 1.5}, &recPop{ID: "b", Name: "B", Pop: 2.5})
	r.h.Drain(bg)
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec")) // pop dropped; the tab does not follow
	r.close()
	r.open(hikoutei.Entity[recPop]("Rec")) // pop added again
	r.passes(10)
	r.shows("Rec_System", []string{"id", "name", "pop", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A", "0", "", "a"}, "b": {"b", "B", "0", "", "b"}})
	r.converged()
}

// I35: on the Input tab, a person's value typed into the column of a
// field that is dropped and added again before the tab followed, never
// imported, is kept in a retired column; the new field's column shows its
// canonical value.
func TestI35_AFieldDroppedAndAddedAgainKeepsAPersonsValueRetired(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B3", "keep me"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recOnlyName]("Rec")) // notes dropped; the tab does not follow
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec")) // notes added again
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "notes", anchorCol, "notes (retired)"}, map[string][]string{
		"a": {"a", "", "a"}, "b": {"b", "", "b", "keep me"}})
	if b, err := hikoutei.Get[recV1](bg, r.s, "b"); err != nil || b.Notes != "" {
		t.Fatalf("b = %+v %v: the dropped field's value came back", b, err)
	}
	r.converged()
}

// I35: a row whose retired column keeps a person's value is never deleted
// with it: when its record is removed, the row's delete meets the kept
// value and the row stays for review.
func TestI35_ARowKeepingARetiredValueIsNotDeletedWithItsRecord(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	if err := r.sheet.Person().Type("Rec_Input", "B3", "keep me"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recNoNotes]("Rec"))
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "tag", anchorCol, "notes (retired)"}, map[string][]string{"b": {"b", "", "b", "keep me"}})
	u := r.s.Begin()
	if err := u.Remove(&recNoNotes{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(10)
	r.shows("Rec_Input", []string{"id", "tag", anchorCol, "notes (retired)"}, map[string][]string{"a": {"a", "", "a"}, "b": {"b", "", "b", "keep me"}})
	r.shows("Rec_System", []string{"id", "name", "tag", anchorCol}, map[string][]string{"a": {"a", "A", "", "a"}})
	if out := r.h.Outbox(); out["conflict"] != 1 {
		t.Fatalf("the row's delete did not settle as left for review: %v", out)
	}
}

type recNameWasTitle struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name,was=title"`
	Notes string `hikoutei:"notes,user"`
}

// noFailedWrites fails the test when a write failed (row_hash_mismatch
// and the like): every queued write must land, before any anti-entropy
// pass corrects what it left.
func (r *shapeRig) noFailedWrites() {
	r.t.Helper()
	if out := r.h.Outbox(); out["failed"] != 0 || out["pending"] != 0 {
		r.t.Fatalf("outbox after the passes: %v", out)
	}
}

// A field renamed and renamed back before the sheet followed: the tab's
// header shows the current layout, which means what the older one did;
// the write queued meanwhile lands (it is not taken for a row a person
// changed).
func TestSheetLayoutRenamedBackBeforeTheSheetFollowed(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTitleWas]("Rec"))
	r.persist(&recTitleWas{ID: "a", Title: "A2"})
	r.close()
	r.open(hikoutei.Entity[recNameWasTitle]("Rec"))
	r.passes(10)
	r.noFailedWrites()
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{
		"a": {"a", "A2", "", "a"}, "b": {"b", "B", "", "b"}})
	r.converged()
}

type recTitlePopWas struct {
	ID    string  `hikoutei:"id,pk"`
	Title string  `hikoutei:"title,was=name"`
	Pop   float64 `hikoutei:"pop"`
	Notes string  `hikoutei:"notes,user"`
}

// The migration's batchUpdate lands but its response is lost while a
// write of the old layout waits: the store finds the tab in the current
// layout (a recovered migration) and the queued write still lands,
// guarded by what the row shows.
func TestSheetLayoutMigrationResponseLostWithAWriteQueued(t *testing.T) {
	t.Parallel()
	for name, def := range map[string]hikoutei.EntityDef{"rename": hikoutei.Entity[recTitleWas]("Rec"),
		"rename and add": hikoutei.Entity[recTitlePopWas]("Rec")} {
		t.Run(name, func(t *testing.T) {
			r := newShapeRig(t)
			r.open(hikoutei.Entity[recV1]("Rec"))
			r.persist(&recV1{ID: "a", Name: "A2"})
			r.close()
			r.open(def)
			r.sheet.Emulator.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThenDrop, Match: emulator.MatchWrites})
			r.h.Dispatch(bg) // the batchUpdate lands, its response is lost
			r.close()
			r.open(def)
			r.passes(10)
			r.noFailedWrites()
			recovered := false
			for ev, err := range r.s.Events(bg, 1) {
				if err != nil {
					t.Fatal(err)
				}
				if p, ok := ev.Payload.(events.SheetLayoutMigrated); ok && p.Recovered {
					recovered = true
				}
			}
			if !recovered {
				t.Fatal("no recovered migration: the test does not test it")
			}
			got, err := r.sheet.Person().Displayed("Rec_System")
			if err != nil || len(got) < 2 || got[1][1] != "A2" {
				t.Fatalf("Rec_System: %q %v", got, err)
			}
			r.converged()
		})
	}
}

// A field dropped and added again before the sheet followed: the column
// the tab shows under that name holds the dropped field's values, not the
// new field's; the tab is migrated (the old column out, the new one in,
// filled from canonical state), never taken as showing the current
// layout.
func TestSheetLayoutDroppedAndAddedAgainBeforeTheSheetFollowed(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recNoName]("Rec"))
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec"))
	if got, err := hikoutei.Get[recV1](bg, r.s, "a"); err != nil || got.Name != "" {
		t.Fatalf("a = %+v %v (the field added again starts empty)", got, err)
	}
	if th := r.tabHealth("Rec_System"); th.State != hikoutei.SyncMigrating {
		t.Fatalf("Rec_System before its migration: %+v", th)
	}
	r.passes(10)
	r.noFailedWrites()
	if th := r.tabHealth("Rec_System"); th.State != hikoutei.SyncOK {
		t.Fatalf("Rec_System after the passes: %+v", th)
	}
	r.shows("Rec_System", []string{"id", "name", "notes", anchorCol}, map[string][]string{
		"a": {"a", "", "", "a"}, "b": {"b", "", "", "b"}})
	r.converged()
}

type recRankUserInt struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
	Rank int64  `hikoutei:"rank,user"`
}

type recRankUserFloat struct {
	ID   string  `hikoutei:"id,pk"`
	Name string  `hikoutei:"name"`
	Rank float64 `hikoutei:"rank,user"`
}

// I35: a person's edit of a user field that is then retyped (int →
// float), made against the old layout, is an edit, never a conflict with
// a change the system did not make: 7, an int, is accepted by the poll
// under the old layout; 2.5, not an int there, is quarantined, and the
// next full scan, reading the column as a float, accepts it.
func TestI35_EditOfAUserFieldRetypedAfterwardsIsAnEdit(t *testing.T) {
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recRankUserInt]("Rec"))
	r.persist(&recRankUserInt{ID: "a", Name: "A", Rank: 1}, &recRankUserInt{ID: "b", Name: "B", Rank: 2})
	r.h.Drain(bg)
	r.close()
	if err := r.sheet.Person().Type("Rec_Input", "B2", "7"); err != nil {
		t.Fatal(err)
	}
	if err := r.sheet.Person().Type("Rec_Input", "B3", "2.5"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recRankUserFloat]("Rec"))
	r.passes(10)
	rank := func(id string, want float64) {
		t.Helper()
		if open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen); err != nil || len(open) != 0 {
			t.Fatalf("open conflicts: %+v %v", open, err)
		}
		if got, err := hikoutei.Get[recRankUserFloat](bg, r.s, id); err != nil || got.Rank != want {
			t.Fatalf("%s = %+v %v, want rank %v", id, got, err, want)
		}
	}
	rank("a", 7)
	if _, err := r.h.FullScan(bg); err != nil {
		t.Fatal(err)
	}
	rank("b", 2.5)
	r.passes(3)
	r.shows("Rec_System", []string{"id", "name", "rank", anchorCol}, map[string][]string{"a": {"a", "A", "7", "a"}, "b": {"b", "B", "2.5", "b"}})
	r.converged()
}

// quarantined is the active quarantine of tab: anchor → reason.
func (r *shapeRig) quarantined(tab string) map[string]string {
	r.t.Helper()
	conn, err := sqlite.OpenConn(filepath.Join(r.dir, "read.sqlite"), sqlite.OpenReadOnly)
	if err != nil {
		r.t.Fatal(err)
	}
	defer conn.Close()
	list, _, err := projector.ListQuarantine(conn, projector.QuarantineFilter{Tab: tab})
	if err != nil {
		r.t.Fatal(err)
	}
	out := map[string]string{}
	for _, q := range list {
		out[q.Anchor] = q.Reason
	}
	return out
}

// I35: cells quarantined before a retype handled by a migration (int →
// float) are examined again under the new type by the next full scan,
// with a normal outcome: 2.5
// (not an int) now decodes and is accepted; "lots" decodes under neither
// and stays quarantined with its reason; 7.5 on a record the migration
// itself changed (4 → 4.5) is a conflict, as any edit against a change the
// system made. The migration's own output never overwrites a person's cell.
func TestI35_QuarantinedCellsAreReexaminedAfterAMigratedRetype(t *testing.T) {
	r := &shapeRig{t: t, dir: t.TempDir(), sheet: hikouteitest.NewSheet(t)}
	r.open(hikoutei.Entity[recRankUserInt]("Rec"))
	r.persist(&recRankUserInt{ID: "a", Name: "A", Rank: 1}, &recRankUserInt{ID: "b", Name: "B", Rank: 2},
		&recRankUserInt{ID: "c", Name: "C", Rank: 3}, &recRankUserInt{ID: "d", Name: "D", Rank: 4})
	r.h.Drain(bg)
	person := r.sheet.Person()
	for cell, text := range map[string]string{"B2": "2.5", "B3": "lots", "B5": "7.5"} {
		if err := person.Type("Rec_Input", cell, text); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := r.h.Poll(bg); err != nil || res.Stats.Quarantined != 3 {
		t.Fatalf("poll under the int type: %+v %v", res.Stats, err)
	}
	if q := r.quarantined("Rec_Input"); len(q) != 3 || q["a"] == "" || q["b"] != "cell_type_mismatch" || q["d"] == "" {
		t.Fatalf("quarantine under the int type: %v", q)
	}
	r.close()
	m := hikoutei.Migrate[recRankUserInt, recRankUserFloat]("Rec", "v2", func(o recRankUserInt) (recRankUserFloat, error) {
		n := recRankUserFloat{ID: o.ID, Name: o.Name, Rank: float64(o.Rank)}
		if o.ID == "d" {
			n.Rank += 0.5
		}
		return n, nil
	})
	s, err := hikoutei.Open(bg, r.dir, hikoutei.Options{Sync: r.sheet.SyncOptions(), NoAdmin: true, Migrations: []hikoutei.Migration{m}},
		hikoutei.Entity[recRankUserFloat]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	r.s = s
	t.Cleanup(func() { s.Close() })
	r.h = hikouteitest.New(t, s)
	r.passes(10)
	// The migration cleared the evidence read under the int type; a full
	// scan, like the quick polls, decodes every row again under the new
	// type.
	if _, err := r.h.FullScan(bg); err != nil {
		t.Fatal(err)
	}
	r.passes(3)
	for id, want := range map[string]float64{"a": 2.5, "b": 2, "c": 3, "d": 4.5} {
		if got, err := hikoutei.Get[recRankUserFloat](bg, r.s, id); err != nil || got.Rank != want {
			t.Fatalf("%s = %+v %v, want rank %v", id, got, err, want)
		}
	}
	if q := r.quarantined("Rec_Input"); len(q) != 1 || q["b"] != "cell_type_mismatch" {
		t.Fatalf("quarantine under the float type: %v", q)
	}
	open, err := r.s.Conflicts(bg, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 || open[0].EntityID != "d" || open[0].Field != "rank" || open[0].SheetValue != "7.5" || open[0].SystemValue != "4.5" {
		t.Fatalf("open conflicts: %+v %v", open, err)
	}
	r.shows("Rec_Input", []string{"id", "rank", anchorCol}, map[string][]string{
		"a": {"a", "2.5", "a"}, "b": {"b", "lots", "b"}, "c": {"c", "3", "c"}, "d": {"d", "7.5", "d"}})
}

// I35: a field retyped text → float, then back float → text: the column's
// cells are rewritten each time in the field's kind (numbers, then text),
// not left as the older kind wrote them.
func TestI35_ARetypeBackRewritesTheColumnInItsKind(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "1.5"}, &recV1{ID: "b", Name: "2"})
	r.passes(10)
	r.close()
	r.open(hikoutei.Entity[recNameFloat]("Rec"))
	r.passes(10)
	r.cellsAre("Rec_System!B2:B3", 1.5, float64(2))
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.passes(10)
	r.cellsAre("Rec_System!B2:B3", "1.5", "2")
	r.converged()
}

// I35: a retype float → text and a reorder before the sheet followed the
// retype: the column moves and its cells become text.
func TestI35_ARetypeAndAReorderRewriteTheColumnInItsKind(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.persist(&recV1{ID: "a", Name: "1.5"}, &recV1{ID: "b", Name: "2"})
	r.passes(10)
	r.close()
	r.open(hikoutei.Entity[recNameFloat]("Rec"))
	r.passes(10)
	r.cellsAre("Rec_System!B2:B3", 1.5, float64(2))
	r.close()
	r.open(hikoutei.Entity[recV1]("Rec"))
	r.close()
	r.open(hikoutei.Entity[recReordered]("Rec"))
	r.passes(10)
	r.cellsAre("Rec_System!C2:C3", "1.5", "2")
	r.converged()
}

func (r *shapeRig) cellsAre(rng string, want ...any) {
	r.t.Helper()
	vr, err := r.sheetService().Spreadsheets.Values.Get(hikouteitest.SpreadsheetID, rng).ValueRenderOption("UNFORMATTED_VALUE").Do()
	if err != nil || len(vr.Values) != len(want) {
		r.t.Fatalf("%s: %#v %v", rng, vr, err)
	}
	for i, w := range want {
		if vr.Values[i][0] != w {
			r.t.Fatalf("%s: %#v, want %#v", rng, vr.Values, want)
		}
	}
}

// I35: a person's value typed into a user column while the store is
// closed, on a row whose record the application then removes, the field
// dropped and added again before the tab followed: the value is never
// deleted (kept in a retired column, or on a row left for review).
func TestI35_AnUnimportedEditOnARemovedRecordSurvivesADropAndAddAgain(t *testing.T) {
	t.Parallel()
	r := newShapeRig(t)
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(10)
	r.close()
	if err := r.sheet.Person().Type("Rec_Input", "C3", "keep me"); err != nil {
		t.Fatal(err)
	}
	r.open(hikoutei.Entity[recV1]("Rec"))
	u := r.s.Begin()
	if err := u.Remove(&recV1{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(bg); err != nil {
		t.Fatal(err)
	}
	r.close()
	r.open(hikoutei.Entity[recTag]("Rec"))
	r.passes(10)
	r.h.Reconcile(bg)
	r.passes(10)
	got, err := r.sheet.Person().Displayed("Rec_Input")
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range got {
		if slices.Contains(row, "keep me") {
			return
		}
	}
	t.Fatalf("the person's value is gone from Rec_Input: %q (outbox %v)", got, r.h.Outbox())
}
