package a1

import (
	"errors"
	"testing"
)

func TestParseForms(t *testing.T) {
	cases := []struct {
		in   string
		want Range
	}{
		{"Sheet1!A1:B2", Range{Sheet: "Sheet1", HasSheet: true, StartRow: 0, StartCol: 0, EndRow: 2, EndCol: 2}},
		{"Sheet1!A:A", Range{Sheet: "Sheet1", HasSheet: true, EndRow: Open, EndCol: 1}},
		{"Sheet1!1:2", Range{Sheet: "Sheet1", HasSheet: true, EndRow: 2, EndCol: Open}},
		{"Sheet1!A5:A", Range{Sheet: "Sheet1", HasSheet: true, StartRow: 4, EndRow: Open, EndCol: 1}},
		{"A1:B2", Range{EndRow: 2, EndCol: 2}},
		{"Sheet1", Range{Sheet: "Sheet1", HasSheet: true, WholeSheet: true, EndRow: Open, EndCol: Open}},
		{"'Bob''s Sheet'!A2:F", Range{Sheet: "Bob's Sheet", HasSheet: true, StartRow: 1, EndRow: Open, EndCol: 6}},
		{"'My Tab'", Range{Sheet: "My Tab", HasSheet: true, WholeSheet: true, EndRow: Open, EndCol: Open}},
		{"🌵 test 1!A1", Range{Sheet: "🌵 test 1", HasSheet: true, EndRow: 1, EndCol: 1}},
		{"Sheet1!A2:2", Range{Sheet: "Sheet1", HasSheet: true, StartRow: 1, EndRow: 2, EndCol: Open}},
		{"B2:A1", Range{EndRow: 2, EndCol: 2}},
		{"CO2", Range{StartRow: 1, StartCol: 92, EndRow: 2, EndCol: 93}},
		{"'CO2'!A1", Range{Sheet: "CO2", HasSheet: true, EndRow: 1, EndCol: 1}},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.in, err)
		}
		if got != c.want {
			t.Errorf("Parse(%q) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

func TestParseErrorsAreTyped(t *testing.T) {
	for _, in := range []string{"", "'unterminated", "'x'y", "''!A1", "!A1"} {
		_, err := Parse(in)
		if !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%q) error = %v, want ErrParse", in, err)
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != "a1_parse_failed" {
			t.Errorf("Parse(%q): want *Error with code a1_parse_failed, got %v", in, err)
		}
	}
}

func TestColumnRoundTrip(t *testing.T) {
	for i := 0; i < MaxColumns; i++ {
		label := ColumnLabel(i)
		back, err := ColumnIndex(label)
		if err != nil || back != i {
			t.Fatalf("column %d → %q → %d (%v)", i, label, back, err)
		}
	}
	if ColumnLabel(25) != "Z" || ColumnLabel(26) != "AA" || ColumnLabel(MaxColumns-1) != "ZZZ" {
		t.Fatal("unexpected labels")
	}
	if _, err := ColumnIndex("AAAA"); !errors.Is(err, ErrColumn) {
		t.Fatalf("want ErrColumn, got %v", err)
	}
	if ColumnLabel(-1) != "" || ColumnLabel(MaxColumns) != "" {
		t.Fatal("out-of-range index must give empty label")
	}
}

func TestFormatEchoesLikeGoogle(t *testing.T) {
	cases := []struct{ in, title, want string }{
		{"'Sheet1'!A1:C", "Sheet1", "Sheet1!A1:C1000"},
		{"'Sheet1'!A2:2", "Sheet1", "Sheet1!A2:Z2"},
		{"'Sheet1'", "Sheet1", "Sheet1!A1:Z1000"},
		{"'Sheet1'!D4", "Sheet1", "Sheet1!D4"},
		{"'Sheet1'!A1:A1", "Sheet1", "Sheet1!A1"},
		{"My Tab!B:B", "My Tab", "'My Tab'!B1:B1000"},
		{"'Bob''s'!A1:B2", "Bob's", "'Bob''s'!A1:B2"},
		{"A1:B2", "CO2", "'CO2'!A1:B2"},
	}
	for _, c := range cases {
		r, err := Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Format(c.title, r, 1000, 26)
		if err != nil || got != c.want {
			t.Errorf("Format(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestBoundRejectsOutsideGrid(t *testing.T) {
	r, _ := Parse("Sheet1!A1:Z2000")
	if _, err := r.Bound(1000, 26); !errors.Is(err, ErrGrid) {
		t.Fatalf("want ErrGrid, got %v", err)
	}
	r, _ = Parse("Sheet1!AA1")
	if _, err := r.Bound(1000, 26); !errors.Is(err, ErrGrid) {
		t.Fatalf("want ErrGrid, got %v", err)
	}
}

func TestNeedsQuotes(t *testing.T) {
	plain := []string{"Sheet1", "Data_2024", "Лист"}
	quoted := []string{"My Sheet", "A1", "CO2", "R1C1", "1st", "Bob's", "a-b", ""}
	for _, s := range plain {
		if NeedsQuotes(s) {
			t.Errorf("%q should not need quotes", s)
		}
	}
	for _, s := range quoted {
		if !NeedsQuotes(s) {
			t.Errorf("%q should need quotes", s)
		}
	}
}

// A title shaped like a cell whose row is out of range (row 0, or beyond
// MaxRows) is still quoted: unquoted, Google may read it as a cell.
func TestQuoteSheetQuotesCellShapedTitles(t *testing.T) {
	for _, title := range []string{"A0", "B99999999", "xfd1048577", "ZZZ0"} {
		q := QuoteSheet(title)
		if q != "'"+title+"'" {
			t.Fatalf("QuoteSheet(%q) = %q", title, q)
		}
		r, err := Parse(q + "!A1")
		if err != nil || r.Sheet != title {
			t.Fatalf("round trip %q: %+v %v", q, r, err)
		}
	}
	for _, title := range []string{"Sheet1", "Part_System", "ABCD1", "TRUE"} {
		if QuoteSheet(title) != title {
			t.Fatalf("QuoteSheet(%q) quoted a plain title", title)
		}
	}
}

// A hand-built Range with negative indexes is outside every grid.
func TestBoundRejectsNegativeIndexes(t *testing.T) {
	for _, r := range []Range{
		{StartRow: -1, EndRow: 2, EndCol: 1},
		{StartCol: -3, EndCol: Open, EndRow: Open},
	} {
		if _, err := r.Bound(1000, 26); !errors.Is(err, ErrGrid) {
			t.Fatalf("Bound(%+v) = %v", r, err)
		}
	}
}
