package cell

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxTextRunes is the Sheets per-cell limit on text length, in characters.
const MaxTextRunes = 50000

// maxExactInt is 2^53-1, the largest "safe" integer: every integer in
// [-(2^53-1), 2^53-1] is exact in a float64 AND no other integer rounds to it
// (2^53+1 rounds to 2^53, so a read 2^53 cannot prove which integer it was).
const maxExactInt = 1<<53 - 1

// Encode converts the Go value v, declared as kind k, into the value a
// RAW-equivalent write sends: a Go string (sent as stringValue), float64
// (numberValue), bool (boolValue) or nil (blank cell).
//
// Integers within ±(2^53-1) are numbers; larger magnitudes are decimal text.
// Accepted inputs per kind: String – string; Int – int64, int, int32;
// Float – float64, float32 (finite), or an integer type within ±(2^53-1);
// Bool – bool;
// Time – time.Time (converted to a UTC serial number, millisecond precision).
// nil encodes to nil for every kind; "" in a String column encodes to nil
// because Sheets cannot store an empty string distinctly from a blank cell.
//
// Errors are *EncodeError (errors.Is ErrUnencodable) with reason
// ReasonNonFinite, ReasonTooLong, ReasonOutOfRange or ReasonUnsupportedValue.
func Encode(k Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case String:
		return encodeString(v)
	case Int:
		return encodeInt(v)
	case Float:
		return encodeFloat(v)
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case Time:
		return encodeTime(v)
	}
	return nil, unencodable(k, ReasonUnsupportedValue)
}

func encodeString(v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, unencodable(String, ReasonUnsupportedValue)
	}
	if !utf8.ValidString(s) {
		return nil, unencodable(String, ReasonUnsupportedValue)
	}
	s = norm.NFC.String(s)
	if utf8.RuneCountInString(s) > MaxTextRunes {
		return nil, unencodable(String, ReasonTooLong)
	}
	if s == "" {
		return nil, nil
	}
	return s, nil
}

func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	}
	return 0, false
}

func encodeInt(v any) (any, error) {
	n, ok := asInt64(v)
	if !ok {
		return nil, unencodable(Int, ReasonUnsupportedValue)
	}
	if n >= -maxExactInt && n <= maxExactInt {
		return float64(n), nil
	}
	return strconv.FormatInt(n, 10), nil
}

func encodeFloat(v any) (any, error) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	default:
		i, ok := asInt64(v)
		if !ok {
			return nil, unencodable(Float, ReasonUnsupportedValue)
		}
		if i > maxExactInt || i < -maxExactInt {
			return nil, unencodable(Float, ReasonOutOfRange)
		}
		f = float64(i)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, unencodable(Float, ReasonNonFinite)
	}
	if f == 0 {
		f = 0 // fold -0 into +0: equal values hash equal
	}
	return f, nil
}

func encodeTime(v any) (any, error) {
	t, ok := v.(time.Time)
	if !ok {
		return nil, unencodable(Time, ReasonUnsupportedValue)
	}
	t = CanonicalTime(t)
	if t.Year() < 1 || t.Year() > 9999 {
		return nil, unencodable(Time, ReasonOutOfRange)
	}
	return SerialFromTime(t), nil
}
