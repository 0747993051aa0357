package cell

import (
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestMarkerReplacesEveryValueSheetsCannotHold(t *testing.T) {
	cases := []struct {
		name string
		kind Kind
		v    any
		text string
	}{
		{"text over the limit", String, strings.Repeat("x", MaxTextRunes+1), "#HIKOUTEI! value_too_large (50001 characters)"},
		{"NFD text counted after NFC", String, strings.Repeat("e\u0301", MaxTextRunes+2), "#HIKOUTEI! value_too_large (50002 characters)"},
		{"NaN", Float, math.NaN(), "#HIKOUTEI! value_not_finite"},
		{"+Inf", Float, math.Inf(1), "#HIKOUTEI! value_not_finite"},
		{"year 10000", Time, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "#HIKOUTEI! value_out_of_range"},
		{"int 2^53+1 in a float column", Float, int64(1<<53 + 1), "#HIKOUTEI! value_out_of_range"},
		{"text in an int column", Int, "7", "#HIKOUTEI! value_unsupported"},
	}
	for _, c := range cases {
		enc, m := EncodeOrMark(c.kind, c.v)
		if m == nil || enc != c.text || m.Text() != c.text {
			t.Fatalf("%s: EncodeOrMark = %#v, %+v; want marker %q", c.name, enc, m, c.text)
		}
		if utf8.RuneCountInString(c.text) > 100 {
			t.Fatalf("%s: marker too long", c.name)
		}
		if !ShowsMarkerOf(c.kind, enc, c.v) {
			t.Fatalf("%s: the marker must show its own value", c.name)
		}
	}
}

func TestWritableValuesAreNeverMarked(t *testing.T) {
	for _, v := range []any{strings.Repeat("é", MaxTextRunes), "", "#HIKOUTEI! value_too_large (50001 characters)", nil} {
		enc, m := EncodeOrMark(String, v)
		want, err := Encode(String, v)
		if m != nil || err != nil || enc != want {
			t.Fatalf("EncodeOrMark(%.20q) = %.20q, %+v", v, enc, m)
		}
	}
}

// A cell showing a marker is canonical only for the value it stands for:
// a legitimate value that happens to read like a marker is just that
// value, and a person's text in place of the marker is an edit.
func TestShowsMarkerOfMatchesOnlyAnUnwritableCanonical(t *testing.T) {
	long := strings.Repeat("a", MaxTextRunes+1)
	marker := MarkOf(String, long).Text()
	cases := []struct {
		observed, canonical any
		want                bool
	}{
		{marker, long, true},
		{marker, strings.Repeat("b", MaxTextRunes+1), true}, // same length: the sheet cannot tell them apart either
		{marker, strings.Repeat("a", MaxTextRunes+2), false},
		{marker, marker, false}, // canonical is the marker's text itself: writable, an ordinary value
		{"edited by a person", long, false},
		{nil, long, false},
		{12.0, long, false},
	}
	for i, c := range cases {
		if got := ShowsMarkerOf(String, c.observed, c.canonical); got != c.want {
			t.Fatalf("case %d: ShowsMarkerOf = %v, want %v", i, got, c.want)
		}
	}
}

// FuzzEncodeOrMark: the result is always writable (Encode accepts it), a
// mark comes exactly with Encode's error, and a marker shows its value.
func FuzzEncodeOrMark(f *testing.F) {
	f.Add(uint8(0), "abc", 1.5, 3)
	f.Add(uint8(0), "x", 0.0, MaxTextRunes+1)
	f.Add(uint8(1), "", math.Inf(1), 0)
	f.Add(uint8(2), "7", 0.0, 0)
	f.Fuzz(func(t *testing.T, kind uint8, s string, fl float64, repeat int) {
		if repeat > 0 && repeat <= MaxTextRunes+10 && len(s) > 0 && len(s)*repeat <= 4*(MaxTextRunes+10) {
			s = strings.Repeat(s, repeat)
		}
		k := []Kind{String, Float, Int}[kind%3]
		var v any = s
		if k == Float && kind%2 == 1 {
			v = fl
		}
		enc, m := EncodeOrMark(k, v)
		_, err := Encode(k, v)
		if (m != nil) != (err != nil) {
			t.Fatalf("mark %+v but Encode error %v", m, err)
		}
		if m == nil {
			return
		}
		text, ok := enc.(string)
		if !ok || !strings.HasPrefix(text, MarkerPrefix) || utf8.RuneCountInString(text) > MaxTextRunes {
			t.Fatalf("marker %#v", enc)
		}
		if !ShowsMarkerOf(k, text, v) {
			t.Fatal("a marker must show the value it replaced")
		}
	})
}
