package engine

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// rowShape: a key, a text, an int, a nullable time, a bool no column holds.
var rowShape = events.EntityShape{Name: "Place", PK: "code", Fields: []events.FieldShape{
	{Name: "name", Kind: events.KindString}, {Name: "alt", Kind: events.KindInt},
	{Name: "opened", Kind: events.KindTime, Nullable: true}, {Name: "active", Kind: events.KindBool}}}

func rowColumns(t *testing.T, numbersAsText ...string) []adoptColumn {
	t.Helper()
	hm, err := layout.MapHeader([]string{"Code", "Name", "Alt", "Opened", "Remarks"}, "code", []string{"name", "alt", "opened", "active"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := adoptColumns(rowShape, hm, numbersAsText)
	if err != nil {
		t.Fatal(err)
	}
	return cols
}

func obs(vs ...any) []cell.Observed {
	out := make([]cell.Observed, len(vs))
	for i, v := range vs {
		if o, ok := v.(cell.Observed); ok {
			out[i] = o
			continue
		}
		out[i] = cell.Observed{Value: v}
	}
	return out
}

// TestAdoptRowDecoding: one row decodes into the key, every field (zero
// values for a blank non-nullable cell and for a field no column holds,
// null for a blank nullable one) or the issues of its cells; a row with
// nothing in a mapped column is blank; the key of a formula is never its
// result.
func TestAdoptRowDecoding(t *testing.T) {
	cols := rowColumns(t)
	cases := []struct {
		name   string
		raw    []cell.Observed
		key    string
		values map[string]any
		issues []aggregates.AdoptIssue
	}{
		{"full", obs("LAX", "Los Angeles", 125.0, "2024-03-01"), "LAX",
			map[string]any{"name": "Los Angeles", "alt": int64(125), "opened": time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), "active": false}, nil},
		{"blanks take zero values, nullable null", obs("HND"), "HND",
			map[string]any{"name": "", "alt": int64(0), "opened": nil, "active": false}, nil},
		{"leading zeros stay text", obs("00123", "x", "5"), "00123",
			map[string]any{"name": "x", "alt": int64(5), "opened": nil, "active": false}, nil},
		{"a number as the key", obs(4711.0, "n"), "4711", nil, []aggregates.AdoptIssue{{Field: "code", Column: "A", Reason: cell.ReasonTypeMismatch}}},
		{"a formula as the key", obs(cell.Observed{Value: "X", Formula: "=B2"}, "n"), "", nil,
			[]aggregates.AdoptIssue{{Field: "code", Column: "A", Reason: cell.ReasonFormula}}},
		{"every bad cell", obs("ORD", 3.0, cell.Observed{Value: 2.0, Formula: "=1+1"}, "01/03/2024"), "ORD", nil,
			[]aggregates.AdoptIssue{{Field: "name", Column: "B", Reason: cell.ReasonTypeMismatch}, {Field: "alt", Column: "C", Reason: cell.ReasonFormula},
				{Field: "opened", Column: "D", Reason: cell.ReasonDateText}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := decodeAdoptRow(cols, c.raw, 7)
			if r.SheetRow != 7 || r.Key != c.key || !reflect.DeepEqual(r.Issues, c.issues) {
				t.Fatalf("row %+v", r)
			}
			if c.values != nil && !reflect.DeepEqual(r.Values, c.values) {
				t.Fatalf("values %#v, want %#v", r.Values, c.values)
			}
			if c.values == nil && r.Values != nil {
				t.Fatalf("values of a row with issues: %#v", r.Values)
			}
		})
	}
	if !blankRow(cols, obs("", nil, "", nil, "a remark")) || blankRow(cols, obs("", cell.Observed{Formula: "=1"})) {
		t.Fatal("blank rows: only a row without anything in a mapped column is blank")
	}
	if r := decodeAdoptRow(rowColumns(t, "code"), obs(4711.0), 2); r.Key != "4711" || len(r.Issues) != 0 {
		t.Fatalf("numbers as text: %+v", r)
	}
	if a, b := decodeAdoptRow(cols, obs("A", "x"), 2), decodeAdoptRow(cols, obs("A", "x", nil, "", nil), 2); a.Hash != b.Hash {
		t.Fatal("a row's hash depends on how many trailing blank cells the read returned")
	}
}

// TestAdoptFormulaHeaderNamesNoColumn: a header cell holding a formula
// (or an error value) is an unnamed column, whatever its result shows: it
// is listed, never matched to a field, and a --map rule naming its result
// names no column.
func TestAdoptFormulaHeaderNamesNoColumn(t *testing.T) {
	header := obs("Code", cell.Observed{Formula: `=CONCAT("Na","me")`, Value: "Name"}, cell.Observed{ErrorType: "REF"}, "Alt")
	a := &adoption{src: adoptSource{shape: rowShape}, tab: &sheetsio.PlainTab{Rows: [][]cell.Observed{header, obs("LAX", "Los Angeles", "x", 125.0)}}}
	rows, err := a.decode()
	if err != nil {
		t.Fatal(err)
	}
	var hows []string
	for _, c := range a.report.Columns {
		hows = append(hows, c.How)
		if c.Header != "" && c.Index == 1 {
			t.Fatalf("the formula's result is shown as a header: %+v", c)
		}
	}
	if want := []string{layout.MappedByHeader, layout.MappedUnnamed, layout.MappedUnnamed, layout.MappedByHeader}; !reflect.DeepEqual(hows, want) {
		t.Fatalf("columns %v, want %v", hows, want)
	}
	if len(rows) != 1 || rows[0].Values["name"] != "" || !slices.Contains(a.report.Missing, "name") {
		t.Fatalf("the formula column was imported: %+v, missing %v", rows, a.report.Missing)
	}
	a.req.Map = map[string]string{"Name": "name"}
	if _, err := a.decode(); !errors.Is(err, layout.ErrAdoptMapInvalid) {
		t.Fatalf("a rule naming a formula's result: %v, want adopt_map_invalid", err)
	}
}
