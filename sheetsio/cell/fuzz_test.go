package cell

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"
)

// rawFrom builds the JSON-decoded cell value a values read could return.
func rawFrom(tag uint8, s string, f float64, b bool) any {
	switch tag % 4 {
	case 0:
		return s
	case 1:
		return f
	case 2:
		return b
	}
	return nil
}

// FuzzDecode checks that Decode never panics, fails only with a
// *MalformedError, and that every accepted value survives Encode → Decode
// unchanged (the codec is a fixed point on what it accepts).
func FuzzDecode(f *testing.F) {
	f.Add(uint8(1), uint8(0), "00123", 0.0, false, false)
	f.Add(uint8(1), uint8(1), "", 123.0, false, true)
	f.Add(uint8(2), uint8(1), "", 1234567890123456800.0, false, false)
	f.Add(uint8(2), uint8(0), "9007199254740993", 0.0, false, false)
	f.Add(uint8(5), uint8(1), "", 43831.5, false, false)
	f.Add(uint8(1), uint8(0), "Cafe\u0301", 0.0, false, false)
	f.Add(uint8(1), uint8(0), " 00123", 0.0, false, true)
	f.Fuzz(func(t *testing.T, kind, tag uint8, s string, fl float64, b, key bool) {
		col := Column{Name: "c", Kind: []Kind{String, Int, Float, Bool, Time}[kind%5], Key: key}
		v, err := Decode(col, rawFrom(tag, s, fl, b))
		if err != nil {
			if !errors.Is(err, ErrMalformed) || v != nil {
				t.Fatalf("Decode error %v with value %#v", err, v)
			}
			return
		}
		enc, err := Encode(col.Kind, v)
		if err != nil {
			if col.Kind == String && errors.Is(err, ErrUnencodable) {
				return // over-long or invalid UTF-8 text read from a sheet
			}
			t.Fatalf("Encode(%#v): %v", v, err)
		}
		again, err := Decode(col, enc)
		if err != nil || !sameValue(v, again) {
			t.Fatalf("round trip %#v -> %#v -> %#v (%v)", v, enc, again, err)
		}
	})
}

func sameValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	if fa, ok := a.(float64); ok && math.IsNaN(fa) {
		return false
	}
	return reflect.DeepEqual(a, b)
}

// FuzzVisibleHash checks that the hash ignores padding and NFC differences.
func FuzzVisibleHash(f *testing.F) {
	f.Add("Cafe\u0301", 1.0, uint8(2))
	f.Fuzz(func(t *testing.T, s string, fl float64, pad uint8) {
		row := []any{s, fl}
		padded := append([]any{s, fl}, make([]any, pad%8)...)
		if VisibleHash(row) != VisibleHash(padded) {
			t.Fatalf("padding changed hash of %#v", row)
		}
	})
}
