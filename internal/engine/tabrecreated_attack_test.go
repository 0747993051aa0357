package engine_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// afterRead runs a person's action once, after the next request whose
// path ends with the suffix armed was answered by the emulator and before
// its response reaches the client: the reader then works on what the
// tab was before.
type afterRead struct {
	mu     sync.Mutex
	suffix string
	action func()
}

// The reads of a poll: the values of the Input tabs, then the grid of the
// rows that changed (a poll with no change sends only the first).
const (
	valuesRead = "/values:batchGetByDataFilter"
	gridRead   = ":getByDataFilter"
)

func (a *afterRead) arm(suffix string, action func()) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.suffix, a.action = suffix, action
}

func (a *afterRead) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		a.mu.Lock()
		act := a.action
		if !strings.HasSuffix(r.URL.Path, a.suffix) {
			act = nil
		}
		if act != nil {
			a.action = nil
		}
		a.mu.Unlock()
		if act != nil {
			act()
		}
	})
}

// openRecreating opens a store of parts on an emulator whose reads an
// afterRead follows, seeded with n parts.
func openRecreating(t *testing.T, n int) (*synced, *afterRead) {
	a := &afterRead{}
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), a.wrap)
	x := openSyncedOn(t, t.TempDir(), sheet, nil, parts)
	seedParts(t, x, n)
	return x, a
}

// recreate deletes tab and adds an empty tab of the same name (a new
// sheetId), as a person undoing a mistake by hand would.
func (x *synced) recreate(tab string) {
	x.t.Helper()
	mustT(x.t, x.sheet.Person().DeleteTab(tab))
	_, err := x.sheet.Person().AddTab(tab, 1000, 26)
	mustT(x.t, err)
}

// sortedRows is tab's displayed rows, the header first, the others in
// order of their first cell.
func (x *synced) sortedRows(tab string) string {
	rows := x.rows(tab)
	if len(rows) > 1 {
		slices.SortFunc(rows[1:], func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	}
	return fmt.Sprint(rows)
}

// wantRebuilt checks that tab shows want again and that no entity was
// removed or changed by what the person did.
func (x *synced) wantRebuilt(tab, want string, n int) {
	x.t.Helper()
	if got := x.sortedRows(tab); got != want {
		x.t.Fatalf("%s after the passes:\n got %s\nwant %s", tab, got, want)
	}
	if k := x.eventTypes(0)[events.TypeEntityRemoved]; k != 0 {
		x.t.Fatalf("%d entities removed", k)
	}
	for i := 1; i <= n; i++ {
		if p := x.part(fmt.Sprint(i)); p.Name != "part "+fmt.Sprint(i) || p.Qty != int64(i) || p.Notes != "" {
			x.t.Fatalf("part %d changed: %+v", i, p)
		}
	}
}

// An Input tab deleted and created again (same name, new sheetId, empty)
// after an anti-entropy pass read it and before the pass compared it: the
// pass repairs nothing wrongly, and the next pass finds the tab empty and
// rebuilds it; no entity is removed.
func TestAnInputTabRecreatedBetweenAnAntiEntropyReadAndItsComparisonIsRebuilt(t *testing.T) {
	x, a := openRecreating(t, 6)
	want := x.sortedRows(partInput)
	a.arm(valuesRead, func() { x.recreate(partInput) })
	reps, err := x.disp.AntiEntropy(t.Context())
	mustT(t, err)
	t.Logf("the pass that read the tab before it was recreated: %+v", reps[partInput])
	x.drain()
	x.reconcile(2)
	x.wantRebuilt(partInput, want, 6)
	if h := x.syncHealth(); h.Failing() {
		t.Fatalf("sync health after the rebuild: %+v", h)
	}
}

// The same between a poll's read and its commit: the poll reads the rows
// as they were (a person's edit among them, accepted); the tab is then
// replaced by an empty one. The next poll sees an emptied tab, a
// suspected mass deletion (C04) that removes nothing, and anti-entropy
// rebuilds the tab, the accepted edit with it.
func TestAnInputTabRecreatedBetweenAPollsReadAndItsCommitIsRebuilt(t *testing.T) {
	x, a := openRecreating(t, 6)
	x.typeIn("2", "notes", "typed before")
	a.arm(gridRead, func() { x.recreate(partInput) })
	if r := x.poll(); r.Stats.Accepted != 1 {
		t.Fatalf("the poll that read the tab before it was recreated: %+v", r.Stats)
	}
	x.drain()
	r := x.poll()
	t.Logf("the poll after: %+v, quarantine %v, health %+v", r.Stats, x.quarantine(partInput), x.syncHealth())
	x.reconcile(2)
	x.poll()
	if p := x.part("2"); p.Notes != "typed before" {
		t.Fatalf("part 2 after the rebuild: %+v, want the accepted edit", p)
	}
	if got := x.cellOf(partInput, "2", "notes"); got != "typed before" {
		t.Fatalf("part 2's notes shown after the rebuild: %q", got)
	}
	if len(x.rows(partInput)) != 7 {
		t.Fatalf("Input tab after the rebuild: %q", x.rows(partInput))
	}
	if h := x.syncHealth(); h.Failing() {
		t.Fatalf("sync health after the rebuild: %+v", h)
	}
}
