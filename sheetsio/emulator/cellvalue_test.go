package emulator

import (
	"reflect"
	"testing"
)

func TestParseTypedLikeTheUI(t *testing.T) {
	cases := []struct {
		in   string
		kind string
		num  float64
		str  string
		fmt  string
	}{
		{"0050", kindNumber, 50, "", ""},
		{"1,234.5", kindNumber, 1234.5, "", fmtGrouped},
		{"-3.5e2", kindNumber, -350, "", ""},
		{"50%", kindNumber, 0.5, "", fmtPercent},
		{"$1.50", kindNumber, 1.5, "", fmtCurrency},
		{"2020-01-01", kindNumber, 43831, "", fmtDate},
		{"1/2/2020", kindNumber, 43832, "", fmtDate},
		{"1899-12-30 12:00", kindNumber, 0.5, "", fmtDateTime},
		{"6:00 PM", kindNumber, 0.75, "", fmtTime},
		{"'0050", kindString, 0, "0050", ""},
		{"=A1+1", kindFormula, 0, "=A1+1", ""},
		{"+1 555 0100", kindString, 0, "+1 555 0100", ""},
		{"-3 units", kindString, 0, "-3 units", ""},
		{"NaN", kindString, 0, "NaN", ""},
		{"2020-02-30", kindString, 0, "2020-02-30", ""},
		{"=", kindString, 0, "=", ""},
	}
	for _, c := range cases {
		got := parseTyped(c.in)
		if got.Kind != c.kind || got.Num != c.num || got.Str != c.str || got.Fmt != c.fmt {
			t.Errorf("parseTyped(%q) = %+v", c.in, got)
		}
	}
	if b := parseTyped("true"); b.Kind != kindBool || !b.Bool {
		t.Errorf("true → %+v", b)
	}
}

func TestFormatNumbersLikeAutomaticFormat(t *testing.T) {
	cases := map[float64]string{
		0: "0", 1: "1", 1.45: "1.45", 0.4: "0.4", 1.0 / 3: "0.3333333333", 0.1 + 0.2: "0.3",
		123456789012345: "123456789012345", 1234567890123456789: "1.23457E+18", -2.5: "-2.5", 1e-12: "1E-12",
	}
	for x, want := range cases {
		if got := formatGeneral(x); got != want {
			t.Errorf("formatGeneral(%v) = %q, want %q", x, got, want)
		}
	}
	if got := formatNumber(43831, fmtDate, "2006-01-02"); got != "2020-01-01" {
		t.Errorf("date = %q", got)
	}
	if got := formatNumber(1234.5, fmtGrouped, ""); got != "1,234.5" {
		t.Errorf("grouped = %q", got)
	}
}

func TestFieldMaskKeepsSelectedPaths(t *testing.T) {
	doc := map[string]any{
		"spreadsheetId": "x",
		"sheets": []any{map[string]any{
			"properties": map[string]any{"title": "S", "sheetId": 1},
			"data":       []any{map[string]any{"rowData": []any{map[string]any{"values": []any{map[string]any{"note": "n", "formattedValue": "v"}, map[string]any{"formattedValue": "w"}}}, map[string]any{"values": []any{map[string]any{"formattedValue": "z"}}}}}},
		}},
	}
	got := parseFieldMask("sheets/data/rowData/values/note").apply(doc)
	trimGridData(got)
	want := map[string]any{"sheets": []any{map[string]any{"data": []any{map[string]any{"rowData": []any{map[string]any{"values": []any{map[string]any{"note": "n"}}}}}}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("masked = %#v", got)
	}
	props := parseFieldMask("spreadsheetId,sheets(properties(title))").apply(doc)
	wantProps := map[string]any{"spreadsheetId": "x", "sheets": []any{map[string]any{"properties": map[string]any{"title": "S"}}}}
	if !reflect.DeepEqual(props, wantProps) {
		t.Fatalf("masked = %#v", props)
	}
}

func TestFormulaFunctionsAndRanges(t *testing.T) {
	emu := New(Options{AutoCreate: true})
	p := emu.Person("b")
	for i, v := range []string{"1", "2", "x", "4"} {
		_ = p.Type("Sheet1", "A"+itoa(i+1), v)
	}
	cases := map[string]string{
		"=SUM(A1:A4)":                 "7",
		"=AVERAGE(A1:A4, 5)":          "3",
		"=MAX(A:A)":                   "4",
		"=COUNT(A1:A4)":               "3",
		"=COUNTA(A1:A4)":              "4",
		"=IF(A1>0, \"pos\", \"neg\")": "pos",
		"=ROUND(2/3, 2)":              "0.67",
		"=CONCATENATE(A3, \"-\", A4)": "x-4",
		"=UPPER(A3)&LEN(\"abc\")":     "X3",
		"=AND(TRUE, A1=1)":            "TRUE",
		"=SUM(A1, A3)":                "#VALUE!",
		"=VLOOKUP(1, A1:A4, 1)":       "#ERROR!",
	}
	for formula, want := range cases {
		if err := p.TypeFormula("Sheet1", "C1", formula); err != nil {
			t.Fatal(err)
		}
		shown, _ := p.Displayed("Sheet1")
		if got := shown[0][2]; got != want {
			t.Errorf("%s = %q, want %q", formula, got, want)
		}
	}
}
