package gsheets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// seedInput appends ids 1..n on Part_Input (rows 2..n+1), anchors a1..an,
// and returns each anchor's expected row hash.
func seedInput(h *harness, w *sheetsio.Workbook, n int) map[string]string {
	h.t.Helper()
	spec, _ := w.Schema().Tab("Part_Input")
	hashes := map[string]string{}
	var ops []sheetsio.Op
	for i := 1; i <= n; i++ {
		a := fmt.Sprint("a", i)
		vals := map[string]any{"id": fmt.Sprint(i), "name": fmt.Sprint("Bolt ", i), "qty": int64(i)}
		ops = append(ops, sheetsio.Op{ID: a, Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: a, Values: vals})
		hash, err := sheetsio.ExpectedRowHash(spec, a, vals)
		if err != nil {
			h.t.Fatal(err)
		}
		hashes[a] = hash
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		if got := h.wantStatus(res, i, sheetsio.StatusApplied); got.WrittenHash != hashes[ops[i].Anchor] {
			h.t.Fatalf("ExpectedRowHash disagrees with the written hash")
		}
	}
	return hashes
}

// rowOf returns the row of the Part_Input tab whose anchor is anchor.
func rowOf(h *harness, anchor string) []any {
	h.t.Helper()
	var found []any
	for _, r := range h.values("Part_Input")[1:] {
		if len(r) > 3 && r[3] == anchor {
			if found != nil {
				h.t.Fatalf("anchor %s on two rows", anchor)
			}
			found = r
		}
	}
	return found
}

func TestC06_UpdateFollowsAnchorAfterSort(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	hashes := seedInput(h, w, 5)
	before, _ := h.p.Snapshot(context.Background(), w, "Part_Input")
	if err := h.emu.Person(testSheetID).SortByColumn("Part_Input", "A", true, 1); err != nil {
		t.Fatal(err)
	}
	after, _ := h.p.Snapshot(context.Background(), w, "Part_Input")
	for a, hash := range hashes {
		b, c := before["Part_Input"].Find(a), after["Part_Input"].Find(a)
		if len(b) != 1 || len(c) != 1 || b[0].Hash != hash || c[0].Hash != hash {
			t.Fatalf("sort changed row %s: %v -> %v", a, b, c)
		}
	}
	if after["Part_Input"].Find("a4")[0].SheetRow == before["Part_Input"].Find("a4")[0].SheetRow {
		t.Fatal("the sort did not move the row; the test proves nothing")
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "u4", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "a4",
		Values: map[string]any{"name": "Bolt M4"}, ExpectedHash: hashes["a4"]}}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if r := rowOf(h, "a4"); r[0] != "4" || r[1] != "Bolt M4" {
		t.Fatalf("row of a4 = %v", r)
	}
	for _, a := range []string{"a1", "a2", "a3", "a5"} {
		if r := rowOf(h, a); r[1] != "Bolt "+a[1:] {
			t.Fatalf("neighbour %s overwritten: %v", a, r)
		}
	}
}

func TestC06_DeletedRowIsNeverANeighbourOverwrite(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	hashes := seedInput(h, w, 5)
	if err := h.emu.Person(testSheetID).DeleteRows("Part_Input", 3, 1); err != nil { // id 2
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "u4", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "a4", Values: map[string]any{"qty": int64(40)}, ExpectedHash: hashes["a4"]},
		{ID: "u2", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "a2", Values: map[string]any{"qty": int64(20)}, ExpectedHash: hashes["a2"]},
		{ID: "d5", Tab: "Part_Input", Kind: sheetsio.OpDelete, Anchor: "a5", ExpectedHash: hashes["a5"]},
		{ID: "d3", Tab: "Part_Input", Kind: sheetsio.OpDelete, Anchor: "a3", ExpectedHash: hashes["a3"]},
	}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if got := h.wantStatus(res, 1, sheetsio.StatusGuardFailed); got.Reason != sheetsio.ReasonAnchorNotFound {
		t.Fatalf("update of deleted row: %+v", got)
	}
	h.wantStatus(res, 2, sheetsio.StatusApplied)
	h.wantStatus(res, 3, sheetsio.StatusApplied)
	rows := h.values("Part_Input")
	if len(rows) != 3 || rowOf(h, "a1")[2] != 1.0 || rowOf(h, "a4")[2] != 40.0 {
		t.Fatalf("rows after = %v", rows)
	}
}

func TestC10_HumanEditDuringSystemWriteIsNotOverwritten(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	hashes := seedInput(h, w, 7) // id 7 = {name: "Bolt 7", qty: 7} on row 8
	if err := h.emu.Person(testSheetID).Type("Part_Input", "C8", "6"); err != nil {
		t.Fatal(err)
	}
	rename := sheetsio.Op{ID: "r7", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "a7", Values: map[string]any{"name": "Bolt M6"}, ExpectedHash: hashes["a7"]}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{rename}})
	got := h.wantStatus(res, 0, sheetsio.StatusGuardFailed)
	if got.Reason != sheetsio.ReasonRowHashMismatch || got.ObservedHash == hashes["a7"] {
		t.Fatalf("guard = %+v", got)
	}
	if r := rowOf(h, "a7"); r[1] != "Bolt 7" || r[2] != 6.0 {
		t.Fatalf("row changed by a failed guard: %v", r)
	}
	// After importing qty 6, the dispatcher retries with the observed hash:
	// only the name cell is written and the person's qty survives.
	rename.ExpectedHash = got.ObservedHash
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{rename}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	if r := rowOf(h, "a7"); r[1] != "Bolt M6" || r[2] != 6.0 {
		t.Fatalf("row = %v", r)
	}
}

func TestI06_DeleteIsFullRowCompareAndSet(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	hashes := seedInput(h, w, 2)
	if err := h.emu.Person(testSheetID).Type("Part_Input", "B2", "edited"); err != nil {
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "d1", Tab: "Part_Input", Kind: sheetsio.OpDelete, Anchor: "a1", ExpectedHash: hashes["a1"]},
		{ID: "d2", Tab: "Part_Input", Kind: sheetsio.OpDelete, Anchor: "a2", ExpectedHash: hashes["a2"], Receipt: &sheetsio.Receipt{EffectID: "e-d2", PayloadHash: "p"}},
	}})
	if got := h.wantStatus(res, 0, sheetsio.StatusGuardFailed); got.Reason != sheetsio.ReasonRowHashMismatch {
		t.Fatalf("%+v", got)
	}
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	if rowOf(h, "a1") == nil || rowOf(h, "a2") != nil {
		t.Fatal("wrong row deleted")
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, "e-d2", "missing")
	if err != nil || recs["e-d2"].Op != "delete" || len(recs) != 1 {
		t.Fatalf("receipts = %+v, %v", recs, err)
	}
}

func TestI16_DuplicateAnchorsFailClosed(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	hashes := seedInput(h, w, 2)
	if err := h.emu.Person(testSheetID).Type("Part_Input", "D3", "a1"); err != nil { // row 3 now also anchors a1
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{{ID: "u1", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "a1", Values: map[string]any{"qty": int64(9)}, ExpectedHash: hashes["a1"]}}})
	if got := h.wantStatus(res, 0, sheetsio.StatusGuardFailed); got.Reason != sheetsio.ReasonAnchorDuplicated {
		t.Fatalf("%+v", got)
	}
}

func TestInvalidOpsAreReportedPerOp(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "x"},
		{ID: "b", Tab: "Nope", Kind: sheetsio.OpAppend, Anchor: "x"},
		{ID: "c", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "x", Values: map[string]any{"bogus": "1"}},
		{ID: "d", Tab: "Part_System", Kind: sheetsio.OpAppend, Anchor: "x", Values: map[string]any{"price": 1.0 / zero()}},
		{ID: "e", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "x", Values: map[string]any{"qty": int64(1)}},
		{ID: "f", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: " x"},
		{ID: "g", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "y", Values: map[string]any{"id": "1"}},
		{ID: "h", Tab: "Part_Input", Kind: sheetsio.OpDelete, Anchor: "y", ExpectedHash: "h"},
		{ID: "i", Tab: layout.ReceiptsTab, Kind: sheetsio.OpAppend, Anchor: "z"},
		{ID: "j", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "x\u00a0"},
		{ID: "k", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "k", Receipt: &sheetsio.Receipt{EffectID: "g"}},
		{ID: "l", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "l", Receipt: &sheetsio.Receipt{EffectID: "g"}},
	}})
	want := []string{sheetsio.ReasonInvalidOp, sheetsio.ReasonUnknownTab, sheetsio.ReasonUnknownColumn, "", sheetsio.ReasonInvalidOp, sheetsio.ReasonInvalidOp, "", sheetsio.ReasonDuplicateTarget, sheetsio.ReasonUnknownTab, sheetsio.ReasonInvalidOp, "", sheetsio.ReasonInvalidOp}
	for i, reason := range want {
		if reason == "" {
			h.wantStatus(res, i, sheetsio.StatusApplied)
			continue
		}
		if got := h.wantStatus(res, i, sheetsio.StatusInvalid); got.Reason != reason {
			t.Fatalf("op %d reason %s, want %s", i, got.Reason, reason)
		}
	}
}

func zero() float64 { return 0 }

func TestStartupDiagnosticNotFound(t *testing.T) {
	h := newHarness(t, emulator.Options{})
	err := h.p.Check(context.Background(), testSheetID)
	var e *sheetsio.Error
	if !errors.Is(err, sheetsio.ErrSpreadsheetNotFound) || !errors.As(err, &e) {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(e.Msg, testSheetID) {
		t.Fatal("diagnostic leaks the spreadsheet id")
	}
	_, err = h.p.Provision(context.Background(), testSheetID, testSchema(t))
	if !errors.Is(err, sheetsio.ErrSpreadsheetNotFound) {
		t.Fatalf("provision err = %v", err)
	}
}

func TestLogsNeverCarryIDsOrPayloads(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	secret := "SECRET-PAYLOAD-4711"
	h.emu.ScriptFaults(
		emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites},
	)
	res := h.dispatch(w, sheetsio.Batch{Fence: &sheetsio.Fence{StoreID: "store-" + secret, Epoch: 1, Token: "tok-" + secret},
		Ops: []sheetsio.Op{appendOp("Part_System", "anchor-"+secret, partValues(secret, 1))}})
	h.wantStatus(res, 0, sheetsio.StatusUncertain)
	_ = h.p.Check(context.Background(), "unknown-"+testSheetID)
	logs := h.logs.String()
	if !strings.Contains(logs, "sheets read retry") || !strings.Contains(logs, "sheets write failed") {
		t.Fatalf("expected diagnostics were not logged: %s", logs)
	}
	for _, leak := range []string{testSheetID, secret} {
		if strings.Contains(logs, leak) {
			t.Fatalf("log leaks %q:\n%s", leak, logs)
		}
	}
}

func TestC04_SnapshotPadsRowsAndFlagsAnEmptyTab(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	seedInput(h, w, 2)
	person := h.emu.Person(testSheetID)
	// A person adds a row by typing only its id: the API returns ["'x9"], and
	// clears row 2's name: ["1", "", 1, "a1"].
	if err := person.Type("Part_Input", "A4", "'x9"); err != nil {
		t.Fatal(err)
	}
	if err := person.Type("Part_Input", "B2", ""); err != nil {
		t.Fatal(err)
	}
	snaps, err := h.p.Snapshot(context.Background(), w, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	s := snaps["Part_Input"]
	if s.Err != nil || s.Empty || len(s.Rows) != 3 || s.Rows[2].Anchor != "" || s.Rows[2].Cells[0] != "x9" {
		t.Fatalf("snapshot = %+v", s)
	}
	for _, r := range s.Rows {
		if len(r.Cells) != 4 {
			t.Fatalf("row not padded to header width: %#v", r.Cells)
		}
	}
	if err := person.DeleteRows("Part_Input", 1, 4); err != nil {
		t.Fatal(err)
	}
	snaps, err = h.p.Snapshot(context.Background(), w, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	if s := snaps["Part_Input"]; !s.Empty || !errors.Is(s.Err, sheetsio.ErrHeaderDrift) || len(s.Rows) != 0 {
		t.Fatalf("an emptied tab must read as Empty and blocked, got %+v", s)
	}
}

func TestErrorsNeverCarryTheSpreadsheetID(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultDrop, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	got := h.wantStatus(res, 0, sheetsio.StatusUncertain)
	for range 6 {
		h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultDrop, Match: emulator.MatchReads})
	}
	_, rerr := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 1))}})
	if !errors.Is(rerr, sheetsio.ErrReadUnavailable) {
		t.Fatalf("read err = %v", rerr)
	}
	for _, err := range []error{got.Err, rerr} {
		if strings.Contains(err.Error(), testSheetID) {
			t.Fatalf("error text leaks the spreadsheet id: %v", err)
		}
	}
}

func TestC06_DeletesAcrossTabsNeverHitNeighbours(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	inHash := seedInput(h, w, 5)
	sysSpec, _ := w.Schema().Tab("Part_System")
	sysHash := map[string]string{}
	var ops []sheetsio.Op
	for i := 1; i <= 5; i++ {
		a := fmt.Sprint("s", i)
		ops = append(ops, sheetsio.Op{ID: a, Tab: "Part_System", Kind: sheetsio.OpAppend, Anchor: a, Values: partValues(fmt.Sprint(i), int64(i))})
		sysHash[a], _ = sheetsio.ExpectedRowHash(sysSpec, a, partValues(fmt.Sprint(i), int64(i)))
	}
	h.dispatch(w, sheetsio.Batch{Ops: ops})
	del := func(tab, a, hash string) sheetsio.Op {
		return sheetsio.Op{ID: "d-" + a, Tab: tab, Kind: sheetsio.OpDelete, Anchor: a, ExpectedHash: hash}
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		del("Part_Input", "a2", inHash["a2"]), del("Part_System", "s4", sysHash["s4"]),
		del("Part_Input", "a4", inHash["a4"]), del("Part_System", "s1", sysHash["s1"]),
		del("Part_Input", "a5", inHash["a5"]), del("Part_System", "s2", sysHash["s2"]),
		{ID: "u3", Tab: "Part_Input", Kind: sheetsio.OpUpdate, Anchor: "a3", Values: map[string]any{"qty": int64(33)}, ExpectedHash: inHash["a3"]},
	}})
	for i := range res.Ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	anchors := func(tab string, col int) []any {
		var out []any
		for _, r := range h.values(tab)[1:] {
			out = append(out, r[col])
		}
		return out
	}
	if got := fmt.Sprint(anchors("Part_Input", 3)); got != "[a1 a3]" {
		t.Fatalf("Part_Input anchors = %s", got)
	}
	if got := fmt.Sprint(anchors("Part_System", 6)); got != "[s3 s5]" {
		t.Fatalf("Part_System anchors = %s", got)
	}
	if r := rowOf(h, "a3"); r[2] != 33.0 {
		t.Fatalf("a3 = %v", r)
	}
}

func TestI16_AmbiguousReceiptIsNotEvidence(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	op := appendOp("Part_System", "r1", partValues("1", 1))
	h.wantStatus(h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}}), 0, sheetsio.StatusApplied)
	// A person pastes a copy of the receipt row: the entry is now listed twice.
	if _, err := h.emu.Person(testSheetID).PasteRow(layout.ReceiptsTab, 2); err != nil {
		t.Fatal(err)
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, op.Receipt.EffectID)
	if !errors.Is(err, sheetsio.ErrReceiptAmbiguous) || len(recs) != 0 {
		t.Fatalf("recs %v, err %v", recs, err)
	}
}

func TestI06_MalformedReceiptRowIsNotEvidence(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	op := appendOp("Part_System", "r1", partValues("1", 1))
	other := appendOp("Part_System", "r2", partValues("2", 2))
	h.wantStatus(h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op, other}}), 0, sheetsio.StatusApplied)
	// The effect count no longer matches the entry lines (e.g. a truncated paste).
	if err := h.emu.Person(testSheetID).Type(layout.ReceiptsTab, "E2", "3"); err != nil {
		t.Fatal(err)
	}
	recs, err := h.p.ReadReceipts(context.Background(), w, op.Receipt.EffectID, other.Receipt.EffectID)
	if !errors.Is(err, sheetsio.ErrReceiptMalformed) || len(recs) != 0 {
		t.Fatalf("recs %v, err %v", recs, err)
	}
}
