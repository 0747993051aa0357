package gsheets

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

func TestChunkByBytesAndRequests(t *testing.T) {
	var units []*unit
	for i := range 10 {
		units = append(units, &unit{op: i, bytes: 300, reqs: []*sheets.Request{{}}})
	}
	chunks := chunk(units, 1000, 100)
	if len(chunks) != 4 {
		t.Fatalf("got %d chunks, want 4 (3+3+3+1 units of 300 B under 1000 B)", len(chunks))
	}
	next := 0
	for _, c := range chunks {
		size := 0
		for _, u := range c {
			if u.op != next {
				t.Fatalf("order broken: unit %d where %d expected", u.op, next)
			}
			next++
			size += u.bytes
		}
		if size > 1000 {
			t.Fatalf("chunk of %d bytes", size)
		}
	}
	if got := chunk(units, 1<<20, 2); len(got) != 5 {
		t.Fatalf("request cap: got %d chunks, want 5", len(got))
	}
	if got := chunk([]*unit{{bytes: 5000}}, 1000, 10); len(got) != 1 {
		t.Fatalf("oversized unit must be sent alone, got %d chunks", len(got))
	}
}

// TestChunkCountsAppendCellsNotRows: appended rows ride in one appendCells
// per tab (and one for the receipt rows), so 20,000 appends to two tabs
// make 3 requests, one chunk under a cap of 5,000 requests; a unit's own
// requests still count one each.
func TestChunkCountsAppendCellsNotRows(t *testing.T) {
	var units []*unit
	for i := range 20000 {
		units = append(units, &unit{op: i, bytes: 100, receipt: &sheetsio.ReceiptEntry{EffectID: "r"}, appends: []appendRow{{sheetID: int64(1 + i%2)}}})
	}
	if got := chunk(units, 1<<30, 5000); len(got) != 1 {
		t.Fatalf("20,000 appends to 2 tabs: %d chunks, want 1", len(got))
	}
	if got := chunk(units, 1<<30, 2); len(got) != 20000 {
		t.Fatalf("a cap of 2 requests: %d chunks, want one append a chunk (its tab's and the receipts' appendCells)", len(got))
	}
	for i := range units {
		units[i].reqs = []*sheets.Request{{}}
	}
	if got := chunk(units, 1<<30, 5000); len(got) != 5 {
		t.Fatalf("20,000 units of a request each: %d chunks, want 5", len(got))
	}
}

func TestAssembleMergesAppendsPerSheet(t *testing.T) {
	row := func(s string) []byte { return []byte(`{"values":[{"userEnteredValue":{"stringValue":"` + s + `"}}]}`) }
	units := []*unit{
		{reqs: []*sheets.Request{{DeleteDimension: &sheets.DeleteDimensionRequest{}}}, appends: []appendRow{{sheetID: 9, js: row("a")}}},
		{appends: []appendRow{{sheetID: 7, js: row("b")}, {sheetID: 9, js: row("c")}}},
		{appends: []appendRow{{sheetID: 7, js: row("d")}}},
	}
	reqs, raw, err := assemble(units, receiptMeta{sheetID: 5})
	if err != nil || len(reqs) != 3 || reqs[0].DeleteDimension == nil {
		t.Fatalf("want delete + 2 appendCells, got %d requests (%v)", len(reqs), err)
	}
	if a := reqs[1].AppendCells; a == nil || a.SheetId != 9 || len(raw[a]) != 2 || string(raw[a][1]) != string(row("c")) {
		t.Fatalf("first append = %+v", reqs[1].AppendCells)
	}
	if a := reqs[2].AppendCells; a == nil || a.SheetId != 7 || len(raw[a]) != 2 || string(raw[a][0]) != string(row("b")) {
		t.Fatalf("second append = %+v", reqs[2].AppendCells)
	}
}

func TestAssemblePacksReceiptEntriesIntoFewRows(t *testing.T) {
	var units []*unit
	for i := range 1000 {
		e := &sheetsio.ReceiptEntry{EffectID: fmt.Sprintf("eff-%04d", i), Op: "append", Tab: "Part_System", Binding: fmt.Sprintf("%016x", i),
			RowHash: fmt.Sprintf("xxh64:%016x", i), PayloadHash: "ph"}
		units = append(units, &unit{appends: []appendRow{{sheetID: 9, js: []byte("{}")}}, receipt: e})
	}
	f := &sheetsio.Fence{StoreID: "s", Epoch: 4, Token: "t"}
	reqs, _, err := assemble(units, receiptMeta{sheetID: 5, fence: f, now: time.Unix(1e9, 0)})
	if err != nil || len(reqs) != 2 || reqs[1].AppendCells.SheetId != 5 {
		t.Fatalf("want the rows' appendCells then the receipts', got %d requests (%v)", len(reqs), err)
	}
	rows := reqs[1].AppendCells.Rows
	if len(rows) < 2 || len(rows) > 3 {
		t.Fatalf("1000 entries of ~60 chars packed into %d receipt rows, want 2-3", len(rows))
	}
	spec := receiptsLayout()
	entries, total := spec.ColumnIndex(layout.ReceiptEntries), 0
	for _, rd := range rows {
		text := *rd.Values[entries].UserEnteredValue.StringValue
		if len(text) > maxEntriesChars {
			t.Fatalf("entries cell of %d chars", len(text))
		}
		total += strings.Count(text, "\n") + 1
	}
	if total != 1000 {
		t.Fatalf("receipt rows list %d entries, want 1000", total)
	}
}

// TestAssemblePacksEntriesOfTheEngineIntoFullRows: 3,000 packed entries
// (33 characters each) fill receipt rows of up to 40,000 characters: 3
// rows, each counting the entries it lists.
func TestAssemblePacksEntriesOfTheEngineIntoFullRows(t *testing.T) {
	var units []*unit
	for i := range 3000 {
		e := &sheetsio.ReceiptEntry{EffectID: fmt.Sprintf("fx%016x", i), Op: "append", Tab: "Part_System", Binding: fmt.Sprintf("%016x", i),
			RowHash: fmt.Sprintf("%016x", i), PayloadHash: fmt.Sprintf("xxh64:%016x", i)}
		units = append(units, &unit{appends: []appendRow{{sheetID: 9, js: []byte("{}")}}, receipt: e})
	}
	reqs, _, err := assemble(units, receiptMeta{sheetID: 5, now: time.Unix(1e9, 0)})
	if err != nil {
		t.Fatal(err)
	}
	rows := reqs[1].AppendCells.Rows
	spec := receiptsLayout()
	total := 0
	for _, rd := range rows {
		text := *rd.Values[spec.ColumnIndex(layout.ReceiptEntries)].UserEnteredValue.StringValue
		es, err := sheetsio.ParseReceiptEntries(text)
		if err != nil || len(text) > maxEntriesChars || int(*rd.Values[spec.ColumnIndex(layout.ReceiptEffects)].UserEnteredValue.NumberValue) != len(es) {
			t.Fatalf("entries cell of %d characters, %d entries, %v", len(text), len(es), err)
		}
		total += len(es)
	}
	if len(rows) != 3 || total != 3000 {
		t.Fatalf("%d receipt rows list %d entries, want 3 and 3000", len(rows), total)
	}
}

func TestI05_CheckFence(t *testing.T) {
	f := sheetsio.Fence{StoreID: "s1", Epoch: 3, Token: "t3"}
	cases := []struct {
		a      sheetsio.Authority
		mirror bool
		err    *sheetsio.Error
	}{
		{sheetsio.Authority{}, true, nil},
		{sheetsio.Authority{Present: true, StoreID: "s1", Epoch: 2, Token: "t2"}, true, nil},
		{sheetsio.Authority{Present: true, StoreID: "s1", Epoch: 3, Token: "t3"}, false, nil},
		{sheetsio.Authority{Present: true, StoreID: "s1", Epoch: 4, Token: "t4"}, false, sheetsio.ErrAuthorityStale},
		{sheetsio.Authority{Present: true, StoreID: "s1", Epoch: 3, Token: "other"}, false, sheetsio.ErrAuthorityStale},
		{sheetsio.Authority{Present: true, StoreID: "s2", Epoch: 1, Token: "x"}, false, sheetsio.ErrAuthorityForeign},
	}
	for _, c := range cases {
		mirror, err := checkFence(c.a, f)
		if mirror != c.mirror || (c.err == nil) != (err == nil) || (c.err != nil && !errors.Is(err, c.err)) {
			t.Fatalf("checkFence(%+v) = %v, %v", c.a, mirror, err)
		}
	}
}
