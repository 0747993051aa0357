package gsheets

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// partV2 is Part after a shape change: price dropped, name renamed title
// and moved after qty, a new system field color, active retyped to text.
func partV2(t *testing.T) *layout.Schema {
	t.Helper()
	s, err := layout.NewSchema(layout.Entity{Name: "Part", Fields: []layout.Field{
		{Name: "id", Kind: cell.String, Key: true},
		{Name: "qty", Kind: cell.Int, Editable: true},
		{Name: "title", Kind: cell.String, Editable: true},
		{Name: "color", Kind: cell.String},
		{Name: "active", Kind: cell.String},
		{Name: "updated", Kind: cell.Time},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var testFence = sheetsio.Fence{StoreID: "store-1", Epoch: 1, Token: "tok"}

func followPart(name string) (string, bool) {
	switch name {
	case "name":
		return "title", true
	case "price":
		return "", false
	}
	return name, true
}

func partMigration(t *testing.T, old layout.TabSpec, cur *layout.Schema) sheetsio.TabMigration {
	spec, _ := cur.Tab(old.Name)
	return sheetsio.TabMigration{Tab: old.Name, Old: old, Fence: &testFence,
		Plan: func(snap *sheetsio.TabSnapshot) (sheetsio.MigrationPlan, error) {
			cp := layout.PlanColumns(old, spec, followPart, func(string) bool { return false }, func(string) bool { return false })
			fill := map[string]map[string]any{}
			for _, r := range snap.Rows {
				fill[r.Anchor] = map[string]any{"color": "red " + r.Anchor, "active": "yes"}
			}
			return sheetsio.MigrationPlan{Columns: cp, Fill: fill}, nil
		}}
}

// A System tab written under Part's first layout is migrated in one
// batchUpdate: the header and every row follow the new layout, kept cells
// move with their column (their notes too), new and retyped columns are
// written, and the hashes returned are what a read under the new layout
// finds.
func TestMigrateTabFollowsTheNewLayout(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, emulator.Options{AutoCreate: true})
	v1 := testSchema(t)
	w := h.provision(v1)
	res := h.dispatch(w, sheetsio.Batch{Fence: &testFence, Ops: []sheetsio.Op{appendOp("Part_System", "p1", partValues("p1", 3)),
		appendOp("Part_System", "p2", partValues("p2", 4))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if err := h.emu.Person(testSheetID).Type("Part_System", "B2", "renamed by hand"); err != nil {
		t.Fatal(err)
	}
	old, _ := v1.Tab("Part_System")
	v2 := partV2(t)
	w2 := sheetsio.OpenWorkbook(testSheetID, v2, w.SheetIDs())
	before := h.counters()
	mres, err := h.p.MigrateTab(ctx, w2, partMigration(t, old, v2))
	if err != nil {
		t.Fatal(err)
	}
	after := h.counters()
	if after.Writes-before.Writes != 1 || after.Reads-before.Reads != 1 {
		t.Fatalf("requests: %+v → %+v, want one read and one write", before, after)
	}
	want := []string{"id", "qty", "title", "color", "active", "updated", layout.AnchorHeader}
	if !reflect.DeepEqual(mres.Header, want) {
		t.Fatalf("header %v", mres.Header)
	}
	vals := h.values("Part_System")
	if !reflect.DeepEqual(vals[0], []any{"id", "qty", "title", "color", "active", "updated", layout.AnchorHeader}) {
		t.Fatalf("header on the sheet: %v", vals[0])
	}
	if vals[1][0] != "p1" || vals[1][1] != float64(3) || vals[1][2] != "renamed by hand" || vals[1][3] != "red p1" || vals[1][4] != "yes" || vals[1][6] != "p1" {
		t.Fatalf("row 2: %v", vals[1])
	}
	snaps, err := h.p.SnapshotKnown(ctx, w2, "Part_System")
	if err != nil || snaps["Part_System"].Err != nil {
		t.Fatalf("read under the new layout: %v %v", err, snaps["Part_System"].Err)
	}
	for i, r := range snaps["Part_System"].Rows {
		if mres.Rows[i].Anchor != r.Anchor || mres.Rows[i].After != r.Hash {
			t.Fatalf("row %s: migration says %s, the sheet hashes %s", r.Anchor, mres.Rows[i].After, r.Hash)
		}
	}
}

// The migration writes only the header cells it changes (new, renamed,
// retired columns): a person's edit of another header cell that lands
// between the migration's read and its write is kept, moved with its
// column, and the result shows the header row as the write left it.
func TestMigrateTabWritesOnlyTheHeaderCellsItChanges(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, emulator.Options{AutoCreate: true})
	v1 := testSchema(t)
	w := h.provision(v1)
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := h.emu.Person(testSheetID).Type("Part_System", "F1", "Updated!"); err != nil {
			t.Error(err)
		}
	}})
	old, _ := v1.Tab("Part_System")
	v2 := partV2(t)
	mres, err := h.p.MigrateTab(ctx, sheetsio.OpenWorkbook(testSheetID, v2, w.SheetIDs()), partMigration(t, old, v2))
	if err != nil || h.emu.PendingFaults() != 0 {
		t.Fatalf("migrate: %v (faults left %d)", err, h.emu.PendingFaults())
	}
	want := []any{"id", "qty", "title", "color", "active", "Updated!", layout.AnchorHeader}
	if got := h.values("Part_System")[0]; !reflect.DeepEqual(got, want) {
		t.Fatalf("header on the sheet: %v, want %v", got, want)
	}
	if !reflect.DeepEqual(mres.HeaderAfter, want) {
		t.Fatalf("header after the write, as the response showed it: %v, want %v", mres.HeaderAfter, want)
	}
	if spec, _ := v2.Tab("Part_System"); !errors.Is(checkHeaderErr(spec, mres.HeaderAfter), sheetsio.ErrHeaderDrift) {
		t.Fatalf("the header after the write is not drift: %v", mres.HeaderAfter)
	}
}

func checkHeaderErr(spec layout.TabSpec, header []any) error {
	_, err := sheetsio.CheckHeader(spec, header)
	return err
}

// Only a header that shows the old layout exactly is migrated; another
// (a person renamed a column) writes nothing: header drift, as before.
func TestMigrateTabRefusesAHeaderAPersonChanged(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, emulator.Options{AutoCreate: true})
	v1 := testSchema(t)
	w := h.provision(v1)
	if err := h.emu.Person(testSheetID).Type("Part_System", "B1", "Name"); err != nil {
		t.Fatal(err)
	}
	old, _ := v1.Tab("Part_System")
	v2 := partV2(t)
	before := h.counters()
	_, err := h.p.MigrateTab(ctx, sheetsio.OpenWorkbook(testSheetID, v2, w.SheetIDs()), partMigration(t, old, v2))
	if !errors.Is(err, sheetsio.ErrHeaderDrift) || h.counters().Writes != before.Writes {
		t.Fatalf("a changed header: %v, writes %d → %d", err, before.Writes, h.counters().Writes)
	}
}

// The fence is checked like a dispatch's: an authority of a newer epoch
// refuses the migration before anything is written (I05).
func TestMigrateTabIsFenced(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, emulator.Options{AutoCreate: true})
	v1 := testSchema(t)
	w := h.provision(v1)
	if err := h.p.WriteAuthority(ctx, w, sheetsio.Fence{StoreID: "store-1", Epoch: 2, Token: "newer"}); err != nil {
		t.Fatal(err)
	}
	old, _ := v1.Tab("Part_System")
	v2 := partV2(t)
	before := h.counters()
	_, err := h.p.MigrateTab(ctx, sheetsio.OpenWorkbook(testSheetID, v2, w.SheetIDs()), partMigration(t, old, v2))
	if !errors.Is(err, sheetsio.ErrAuthorityStale) || h.counters().Writes != before.Writes {
		t.Fatalf("a stale fence: %v", err)
	}
}

// An Input column kept retired moves after the anchor with its cells and
// notes, under its retired header; ReadHeaders shows the row as it is.
func TestMigrateTabKeepsARetiredColumnAfterTheAnchor(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, emulator.Options{AutoCreate: true})
	v1 := testSchema(t)
	w := h.provision(v1)
	h.dispatch(w, sheetsio.Batch{Fence: &testFence, Ops: []sheetsio.Op{appendOp("Part_Input", "p1", map[string]any{"id": "p1", "name": "n1", "qty": int64(1)})}})
	person := h.emu.Person(testSheetID)
	if err := person.Type("Part_Input", "B2", "typed by a person"); err != nil {
		t.Fatal(err)
	}
	old, _ := v1.Tab("Part_Input")
	s2, _ := layout.NewSchema(layout.Entity{Name: "Part", Fields: []layout.Field{{Name: "id", Kind: cell.String, Key: true},
		{Name: "qty", Kind: cell.Int, Editable: true}}})
	spec, _ := s2.Tab("Part_Input")
	w2 := sheetsio.OpenWorkbook(testSheetID, s2, w.SheetIDs())
	m := sheetsio.TabMigration{Tab: "Part_Input", Old: old, Fence: &testFence, Plan: func(*sheetsio.TabSnapshot) (sheetsio.MigrationPlan, error) {
		drop := func(n string) (string, bool) { return n, n != "name" }
		keep := func(n string) bool { return n == "name" }
		return sheetsio.MigrationPlan{Columns: layout.PlanColumns(old, spec, drop, keep, func(string) bool { return false })}, nil
	}}
	mres, err := h.p.MigrateTab(ctx, w2, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"id", "qty", layout.AnchorHeader, "name (retired)"}
	if !reflect.DeepEqual(mres.Header, want) {
		t.Fatalf("header %v", mres.Header)
	}
	vals := h.values("Part_Input")
	if !reflect.DeepEqual(vals[1], []any{"p1", float64(1), "p1", "typed by a person"}) {
		t.Fatalf("row 2: %v", vals[1])
	}
	heads, err := h.p.ReadHeaders(ctx, w2, "Part_Input", "Part_System")
	if err != nil || !reflect.DeepEqual(heads["Part_Input"], []any{"id", "qty", layout.AnchorHeader, "name (retired)"}) || len(heads["Part_System"]) != 7 {
		t.Fatalf("headers: %v %v", heads, err)
	}
	snaps, err := h.p.SnapshotKnown(ctx, w2, "Part_Input")
	if err != nil || snaps["Part_Input"].Err != nil || snaps["Part_Input"].Rows[0].Hash != mres.Rows[0].After {
		t.Fatalf("the retired column is outside the layout: %v %+v", err, snaps["Part_Input"])
	}
}

// TestAColumnFilledOnALargeTabGoesInUnitsABodyCarries: a migration that
// fills a column on every row of a 171,075-row tab writes it in units of
// about fillRunBytes, each of consecutive rows after the one before, every
// row once: never one unit larger than a body may carry (Google refuses a
// body over 10 MiB, and a unit is never split), as one run of 12 MB was.
func TestAColumnFilledOnALargeTabGoesInUnitsABodyCarries(t *testing.T) {
	s, err := layout.NewSchema(cityEntity())
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := s.Tab("City_System")
	const n = 171075
	rows := make([]migratedRow, n)
	for i := range rows {
		cells := make([]any, len(spec.Columns))
		cells[1] = strings.Repeat("x", 40) + strconv.Itoa(i)
		rows[i] = migratedRow{sheetRow: i + 2, cells: cells, written: map[int]bool{1: true}}
	}
	units := fillUnits(7, spec, rows)
	next := int64(1) // 0-based grid row of the first data row
	for i, u := range units {
		if u.bytes > 2*fillRunBytes || u.bytes > bodyLimit(DefaultMaxBatchBytes) {
			t.Fatalf("unit %d of %d is %d bytes", i, len(units), u.bytes)
		}
		r := u.reqs[0].UpdateCells
		if r.Range.StartRowIndex != next || r.Range.StartColumnIndex != 1 || len(r.Rows) != int(r.Range.EndRowIndex-r.Range.StartRowIndex) {
			t.Fatalf("unit %d writes %+v with %d rows, want from row %d", i, r.Range, len(r.Rows), next)
		}
		next = r.Range.EndRowIndex
	}
	if next != n+1 || len(units) < 2 {
		t.Fatalf("%d units end at row %d, want every row of %d", len(units), next, n)
	}
}
