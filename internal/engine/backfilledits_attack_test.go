package engine_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// backfillParts is the size of the store that turns sync on.
const backfillParts = 3000

// unsyncedParts commits n parts to a new store without sync and closes
// it; it returns the store's directory.
func unsyncedParts(t *testing.T, n int) string {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: testLeaseTTL, Logger: quiet}, parts...)
	mustT(t, err)
	u := s.Begin()
	for i := 1; i <= n; i++ {
		mustT(t, u.Persist(&Part{ID: strconv.Itoa(i), Name: "part " + strconv.Itoa(i), SKU: fmt.Sprintf("%05d", i), Qty: int64(i)}))
	}
	_, err = u.Commit(ctx)
	mustT(t, err)
	mustT(t, s.Close())
	return dir
}

// meddle is a person working on the Input tab while the backfill fills
// it: types notes into the row in the middle (or the next with an anchor), inserts two blank rows near
// the top, deletes the third row shown and pastes a copy of the second
// (part 1's) at the end. It returns the part whose notes it typed and the text.
func (x *synced) meddle(round int) (id, text string) {
	x.t.Helper()
	p := x.sheet.Person()
	rows := x.rows(partInput)
	if len(rows) < 6 {
		return "", ""
	}
	text = fmt.Sprintf("typed in round %d", round)
	for i := len(rows) / 2; i < len(rows) && (id == "" || id == "1"); i++ {
		id = anchorOf(rows[0], rows[i])
	}
	x.typeIn(id, "notes", text)
	mustT(x.t, p.InsertRows(partInput, 3, 2))
	mustT(x.t, p.DeleteRows(partInput, 6, 1))
	_, err := p.PasteRow(partInput, 2)
	mustT(x.t, err)
	return id, text
}

// A store of 3,000 parts turns sync on; while the backfill fills the
// Input tab (500 rows a round), a person types into it, inserts blank
// rows, deletes a row and pastes a copy of one. Every typed edit is
// accepted, no entity is removed or duplicated, and the backfill
// completes: the System tab shows every part once, the Input tab every
// part, the pasted copies of part 1 quarantined (duplicate_anchor: an
// Input tab's copies are people's to resolve, docs/sync.md).
func TestAPersonEditingDuringABackfillLosesNoEditAndTheBackfillCompletes(t *testing.T) {
	dir := unsyncedParts(t, backfillParts)
	x := openSyncedOn(t, dir, hikouteitest.NewSheet(t), nil, parts, func(so *hikoutei.SyncOptions) { so.MaxBatch = 500 })
	typed := map[string]string{}
	for round := range 8 {
		if _, err := x.h.Reconcile(ctx); err != nil {
			t.Fatalf("reconcile in round %d: %v", round, err)
		}
		x.drain()
		if id, text := x.meddle(round); id != "" {
			typed[id] = text
		}
		x.poll()
	}
	for round := 0; ; round++ {
		before := x.disp.C.Backfilled.Load()
		x.reconcile(1)
		x.fullScan()
		x.drain()
		if x.disp.C.Backfilled.Load() == before && round >= 2 {
			t.Logf("the backfill completed %d rounds after the person stopped", round)
			break
		}
		if round == 30 {
			t.Fatal("the backfill never completed")
		}
	}
	for id, text := range typed {
		if p := x.part(id); p.Notes != text || x.cellOf(partInput, id, "notes") != text {
			t.Errorf("part %s: notes %q, shown %q, want the person's %q", id, p.Notes, x.cellOf(partInput, id, "notes"), text)
		}
	}
	t.Logf("%d edits typed", len(typed))
	if q := x.quarantine(partInput)["1"]; !hasReason(q, "duplicate_anchor") {
		t.Errorf("part 1's pasted copies on the Input tab: quarantine %v, want duplicate_anchor", q)
	}
	x.wantEveryPartShown(backfillParts, "1")
	wantRowsOnce(t, x.sheet, "Part_System", backfillParts)
	if c := x.unsettled(); c != 0 {
		t.Fatalf("%d effects unsettled after the backfill", c)
	}
}

// wantEveryPartShown checks that the Input tab shows parts 1..n, each
// once but dup (a person's pasted copies), and nothing else but blank rows.
func (x *synced) wantEveryPartShown(n int, dup string) {
	x.t.Helper()
	rows := x.rows(partInput)
	seen := map[string]int{}
	for _, r := range rows[1:] {
		if strings.Join(r, "") != "" {
			seen[anchorOf(rows[0], r)]++
		}
	}
	for i := 1; i <= n; i++ {
		if id := strconv.Itoa(i); seen[id] != 1 && (id != dup || seen[id] == 0) {
			x.t.Errorf("part %s shown %d times on the Input tab", id, seen[id])
		}
	}
	if len(seen) != n {
		x.t.Fatalf("the Input tab shows %d anchors, want %d", len(seen), n)
	}
}
