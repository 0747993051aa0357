package cell

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Decode converts one cell value read with UNFORMATTED_VALUE + SERIAL_NUMBER
// (a JSON-decoded string, float64, json.Number, bool or nil) into the Go value
// of a column declared as col.Kind: string, int64, float64, bool, time.Time,
// or nil for a blank cell ("" and nil are both blank).
//
// Decoding is strict; every deviation is a *MalformedError (errors.Is
// ErrMalformed) whose Reason is:
//   - ReasonTypeMismatch: a number or bool in a String column (C01), text in
//     a Float, Bool or Time column, a non-numeric text in an Int column;
//   - ReasonNotExactInteger: a fractional number, or one beyond ±(2^53-1), in an
//     Int column (C02);
//   - ReasonNonCanonicalInteger: integer text not in canonical decimal form;
//   - ReasonEdgeWhitespace: leading/trailing white space in a Key column (C11);
//   - ReasonNonFinite / ReasonOutOfRange / ReasonUnsupportedValue.
//
// Text is returned NFC-normalised, so an NFD retype equals the NFC value (C11).
func Decode(col Column, raw any) (any, error) {
	raw, err := normaliseRaw(col.Kind, raw)
	if err != nil || raw == nil {
		return nil, err
	}
	switch col.Kind {
	case String:
		return decodeString(col, raw)
	case Int:
		return decodeInt(raw)
	case Float:
		return decodeFloat(raw)
	case Bool:
		if b, ok := raw.(bool); ok {
			return b, nil
		}
		return nil, malformed(Bool, ReasonTypeMismatch)
	case Time:
		return decodeTime(raw)
	}
	return nil, malformed(col.Kind, ReasonUnsupportedValue)
}

// normaliseRaw maps blanks to nil and json.Number to float64 and rejects JSON
// shapes no cell can have (objects, arrays).
func normaliseRaw(k Kind, raw any) (any, error) {
	switch v := raw.(type) {
	case nil:
		return nil, nil
	case string:
		if v == "" {
			return nil, nil
		}
		return v, nil
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, malformed(k, ReasonUnsupportedValue)
		}
		return f, nil
	case float64, bool:
		return v, nil
	}
	return nil, malformed(k, ReasonUnsupportedValue)
}

func decodeString(col Column, raw any) (any, error) {
	s, ok := raw.(string)
	if !ok {
		return nil, malformed(String, ReasonTypeMismatch)
	}
	if !utf8.ValidString(s) {
		return nil, malformed(String, ReasonUnsupportedValue)
	}
	if col.Key && hasEdgeSpace(s) {
		return nil, malformed(String, ReasonEdgeWhitespace)
	}
	return norm.NFC.String(s), nil
}

func hasEdgeSpace(s string) bool {
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(first) || unicode.IsSpace(last)
}

func decodeInt(raw any) (any, error) {
	switch v := raw.(type) {
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, malformed(Int, ReasonNonFinite)
		}
		if v != math.Trunc(v) || math.Abs(v) > maxExactInt {
			return nil, malformed(Int, ReasonNotExactInteger)
		}
		return int64(v), nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
				return nil, malformed(Int, ReasonOutOfRange)
			}
			if _, ferr := strconv.ParseFloat(v, 64); ferr == nil {
				return nil, malformed(Int, ReasonNonCanonicalInteger)
			}
			return nil, malformed(Int, ReasonTypeMismatch)
		}
		if strconv.FormatInt(n, 10) != v {
			return nil, malformed(Int, ReasonNonCanonicalInteger)
		}
		return n, nil
	}
	return nil, malformed(Int, ReasonTypeMismatch)
}

func decodeFloat(raw any) (any, error) {
	f, ok := raw.(float64)
	if !ok {
		return nil, malformed(Float, ReasonTypeMismatch)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, malformed(Float, ReasonNonFinite)
	}
	if f == 0 {
		f = 0
	}
	return f, nil
}

func decodeTime(raw any) (any, error) {
	f, ok := raw.(float64)
	if !ok {
		return nil, malformed(Time, ReasonTypeMismatch)
	}
	t, ok := TimeFromSerial(f)
	if !ok {
		return nil, malformed(Time, ReasonOutOfRange)
	}
	return t, nil
}
