package gsheets

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// regionLog keeps the ranges the API requests rendered of one tab while on.
type regionLog struct {
	mu   sync.Mutex
	on   bool
	tab  string
	seen [][]emulator.Region // one entry per API request
}

func (l *regionLog) observe(a emulator.Access) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on || a.Person {
		return
	}
	var mine []emulator.Region
	for _, r := range a.Reads {
		if r.Tab == l.tab {
			mine = append(mine, r)
		}
	}
	l.seen = append(l.seen, mine)
}

// appendParts appends n rows p0000… to Part_System, in order: dispatches
// of at most 500 rows, one after another, each one body (a larger
// dispatch of new rows may go as bodies side by side, whose rows land in
// either order).
func appendParts(h *harness, w *sheetsio.Workbook, n int) {
	h.t.Helper()
	for lo := 0; lo < n; lo += 500 {
		ops := make([]sheetsio.Op, min(n-lo, 500))
		for i := range ops {
			a := fmt.Sprintf("p%04d", lo+i)
			ops[i] = appendOp("Part_System", a, partValues(a, 1))
		}
		for i, r := range h.dispatch(w, sheetsio.Batch{Ops: ops}).Ops {
			if r.Status != sheetsio.StatusApplied {
				h.t.Fatalf("op %d: %+v", lo+i, r)
			}
		}
	}
}

// resent is op resent under another effect (a replay after an uncertain
// outcome carries the same row).
func resent(op sheetsio.Op, id string) sheetsio.Op {
	op.ID, op.Receipt = id, &sheetsio.Receipt{EffectID: id, PayloadHash: "p"}
	return op
}

// A replay on a large tab reads again only the rows its anchors show on,
// not the tab: two replays of adjacent rows (one range of 2 rows), a
// conflict (one row), beside a fresh append; each still settles as today.
func TestReplayOnALargeTabReadsOnlyTheAnchoredRows(t *testing.T) {
	log := &regionLog{tab: "Part_System"}
	h := newHarness(t, emulator.Options{AutoCreate: true, Observe: log.observe})
	w := h.provision(testSchema(t))
	const n = 1500
	appendParts(h, w, n)
	log.mu.Lock()
	log.on = true
	log.mu.Unlock()
	conflict := appendOp("Part_System", "p0900", partValues("p0900", 99))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		resent(appendOp("Part_System", "p0100", partValues("p0100", 1)), "a"),
		resent(appendOp("Part_System", "p0101", partValues("p0101", 1)), "b"),
		resent(conflict, "c"),
		appendOp("Part_System", "fresh", partValues("fresh", 1)),
	}})
	h.wantStatus(res, 0, sheetsio.StatusUnchanged)
	h.wantStatus(res, 1, sheetsio.StatusUnchanged)
	if got := h.wantStatus(res, 2, sheetsio.StatusGuardFailed); got.Reason != sheetsio.ReasonAnchorExists {
		t.Fatalf("conflict: %+v", got)
	}
	h.wantStatus(res, 3, sheetsio.StatusApplied)
	if res.Reads != 2 {
		t.Fatalf("%d reads, want 2 (anchor column, then the anchored rows)", res.Reads)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.seen) < 2 {
		t.Fatalf("%d requests observed", len(log.seen))
	}
	second := log.seen[1]
	want := []emulator.Region{{Tab: "Part_System", R0: 101, R1: 103}, {Tab: "Part_System", R0: 901, R1: 902}}
	if len(second) != len(want) {
		t.Fatalf("second read rendered %+v, want rows 102-103 and 902 only", second)
	}
	for i, r := range second {
		if r.R0 != want[i].R0 || r.R1 != want[i].R1 {
			t.Fatalf("second read rendered %+v, want rows 102-103 and 902 only", second)
		}
	}
}

// A person sorting the tab between the preflight's two reads moves the
// anchored rows: the dispatch fails as a changed read (nothing written),
// and its retry settles the replay where the row now is, writing nothing
// twice.
func TestSortBetweenThePreflightReadsRetriesAndWritesNothingTwice(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	appendParts(h, w, 5)
	batch := sheetsio.Batch{Ops: []sheetsio.Op{
		resent(appendOp("Part_System", "p0001", partValues("p0001", 1)), "a"),
		appendOp("Part_System", "fresh", partValues("fresh", 1)),
	}}
	h.emu.ScriptFaults(
		emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchReads, Interleave: func() {}},
		emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchReads, Interleave: func() {
			if err := h.emu.Person(testSheetID).SortByColumn("Part_System", "G", true, 1); err != nil {
				t.Error(err)
			}
		}})
	before := h.counters()
	_, err := h.p.Dispatch(t.Context(), w, batch)
	if !errors.Is(err, sheetsio.ErrReadRejected) {
		t.Fatalf("dispatch after a sort between its reads: %v, want read_rejected", err)
	}
	if after := h.counters(); after.Writes != before.Writes || after.Reads-before.Reads != 2 {
		t.Fatalf("reads %d, writes %d; want 2 reads and no write", after.Reads-before.Reads, after.Writes-before.Writes)
	}
	res := h.dispatch(w, batch)
	h.wantStatus(res, 0, sheetsio.StatusUnchanged)
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	for _, a := range []string{"p0001", "fresh"} {
		if got := rowsWithAnchor(h.values("Part_System"), 6, a); got != 1 {
			t.Fatalf("%s shows on %d rows, want 1", a, got)
		}
	}
}
