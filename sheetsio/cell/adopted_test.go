package cell

import (
	"testing"
	"time"
)

// TestParseDateTextAcceptsTheISOFormsOnly: the documented forms decode to
// UTC at millisecond precision; every other spelling of a date is refused,
// never guessed.
func TestParseDateTextAcceptsTheISOFormsOnly(t *testing.T) {
	utc := func(y, mo, d, h, mi, s, ms int) time.Time {
		return time.Date(y, time.Month(mo), d, h, mi, s, ms*1e6, time.UTC)
	}
	ok := map[string]time.Time{
		"2024-03-01":                    utc(2024, 3, 1, 0, 0, 0, 0),
		"  2024-03-01 ":                 utc(2024, 3, 1, 0, 0, 0, 0),
		"2024-03-01 14:30":              utc(2024, 3, 1, 14, 30, 0, 0),
		"2024-03-01T14:30":              utc(2024, 3, 1, 14, 30, 0, 0),
		"2024-03-01 14:30:05":           utc(2024, 3, 1, 14, 30, 5, 0),
		"2024-03-01 14:30:05.25":        utc(2024, 3, 1, 14, 30, 5, 250),
		"2024-03-01T14:30:05.007Z":      utc(2024, 3, 1, 14, 30, 5, 7),
		"2024-03-01T14:30:05+09:00":     utc(2024, 3, 1, 5, 30, 5, 0),
		"2024-03-01T00:30-01:30":        utc(2024, 3, 1, 2, 0, 0, 0),
		"2024-02-29":                    utc(2024, 2, 29, 0, 0, 0, 0),
		"0001-01-01":                    utc(1, 1, 1, 0, 0, 0, 0),
		"9999-12-31 23:59:59.999":       utc(9999, 12, 31, 23, 59, 59, 999),
		"1999-12-31T23:59:59.999-00:00": utc(1999, 12, 31, 23, 59, 59, 999),
	}
	for in, want := range ok {
		got, good := ParseDateText(in)
		if !good || !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseDateText(%q) = %v, %v; want %v", in, got, good, want)
		}
	}
	for _, in := range []string{"", "01/03/2024", "2024/03/01", "1 March 2024", "2024-3-1", "24-03-01", "2024-03-01 14",
		"2024-03-01 14:30:05.1234", "2024-02-30", "2023-02-29", "2024-13-01", "2024-03-01 24:00", "2024-03-01 12:60",
		"2024-03-01Z", "2024-03-01T10:00+24:00", "2024-03-01T10:00+0900", "2024-03-01  14:30", "０２０２４-03-01", "0000-01-01",
		"2024-03-01T14:30:05 Z", "March 2024"} {
		if got, good := ParseDateText(in); good {
			t.Errorf("ParseDateText(%q) = %v, accepted", in, got)
		}
	}
}

// TestDecodeAdoptedKeepsThePollingRules: adoption decodes every cell as
// polling does (C01 leading zeros, C02 big integers, C03 formulas, C11
// NFC and edge spaces in keys, merged and error cells), plus dates kept
// as text and, on request, numbers in text fields.
func TestDecodeAdoptedKeepsThePollingRules(t *testing.T) {
	str, key, num := Column{Name: "s", Kind: String}, Column{Name: "k", Kind: String, Key: true}, Column{Name: "n", Kind: Int}
	date := Column{Name: "d", Kind: Time}
	cases := []struct {
		name   string
		col    Column
		o      Observed
		text   bool
		want   any
		reason string
	}{
		{"C01 leading zeros stay text", str, Observed{Value: "00123"}, false, "00123", ""},
		{"C01 a number in a text field", str, Observed{Value: 123.0}, false, nil, ReasonTypeMismatch},
		{"numbers as text: an integer", key, Observed{Value: 123.0}, true, "123", ""},
		{"numbers as text: a fraction stays refused", str, Observed{Value: 1.5}, true, nil, ReasonTypeMismatch},
		{"numbers as text: beyond 2^53 stays refused", str, Observed{Value: 9007199254740993.0}, true, nil, ReasonTypeMismatch},
		{"numbers as text: a bool stays refused", str, Observed{Value: true}, true, nil, ReasonTypeMismatch},
		{"C02 exact big integer as text", num, Observed{Value: "1234567890123456789"}, false, int64(1234567890123456789), ""},
		{"C02 an inexact number", num, Observed{Value: 1234567890123456800.0}, false, nil, ReasonNotExactInteger},
		{"leading zeros in an int field", num, Observed{Value: "00123"}, false, nil, ReasonNonCanonicalInteger},
		{"C03 a formula is never its result", str, Observed{Value: "x", Formula: "=A1"}, true, nil, ReasonFormula},
		{"a formula in a date field", date, Observed{Value: 45000.0, Formula: "=TODAY()"}, false, nil, ReasonFormula},
		{"an error value", num, Observed{ErrorType: "REF"}, false, nil, ReasonErrorValue},
		{"a merged cell", str, Observed{Value: "x", Merged: true}, false, nil, ReasonMerged},
		{"C11 NFD becomes NFC", str, Observed{Value: "Cafe\u0301"}, false, "Café", ""},
		{"C11 edge space in a key", key, Observed{Value: " 00123"}, false, nil, ReasonEdgeWhitespace},
		{"C11 edge space in a key, numbers as text", key, Observed{Value: "00123 "}, true, nil, ReasonEdgeWhitespace},
		{"a date typed in the UI (serial)", date, Observed{Value: 45352.5}, false, time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC), ""},
		{"a date kept as text", date, Observed{Value: "2024-03-01"}, false, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), ""},
		{"a date kept as ambiguous text", date, Observed{Value: "01/03/2024"}, false, nil, ReasonDateText},
		{"a bool in a date field", date, Observed{Value: true}, false, nil, ReasonTypeMismatch},
		{"blank", date, Observed{}, false, nil, ""},
		{"text in an int field", num, Observed{Value: "seven"}, false, nil, ReasonTypeMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeAdopted(c.col, c.o, c.text)
			if c.reason != "" {
				wantReason(t, err, c.reason)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tm, ok := c.want.(time.Time); ok {
				if g, ok := got.(time.Time); !ok || !g.Equal(tm) {
					t.Fatalf("got %#v, want %v", got, tm)
				}
				return
			}
			if got != c.want {
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}
