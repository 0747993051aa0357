package events

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// ConvertValue converts the canonical value v of a field shaped from into
// the canonical value of the same field shaped to, losslessly: the result
// converts back to exactly v, or the conversion fails with
// ErrValueNotConvertible. It is the one rule of retypes, shared by the
// classification at Open (which counts the values that do not convert),
// the read model (which reads old events into the new kind) and the
// sheet layout migration.
//
//   - null stays null for a nullable field and fails for a required one;
//     a value of a field that became nullable is kept;
//   - int → float when the integer is exactly a float64 (|i| ≤ 2^53);
//     float → int when the float is integral and fits an int64;
//   - anything → string as its canonical text: integers in decimal,
//     floats in the shortest form that reads back ('g'), booleans as
//     "true"/"false", times in RFC 3339 UTC with milliseconds;
//   - string → int, float, bool or time only when the text is exactly
//     that canonical text ("5" → 5, never "05", "+5" or " 5": C01);
//   - bool ↔ int, float or time, and time ↔ int or float, never convert.
func ConvertValue(v any, from, to FieldShape) (any, error) {
	if v == nil {
		if to.Nullable {
			return nil, nil
		}
		return nil, fmt.Errorf("%w: null cannot be a required %s", ErrValueNotConvertible, to.Kind)
	}
	if from.Kind == to.Kind {
		return v, nil
	}
	if to.Kind == KindString {
		if s, ok := CanonicalText(v); ok {
			return s, nil
		}
	} else if out, ok := convertTo(v, to.Kind); ok {
		return out, nil
	}
	return nil, fmt.Errorf("%w: a %s value cannot be a %s", ErrValueNotConvertible, from.Kind, to.Kind)
}

// CanonicalText is the text a canonical scalar converts to as a string
// field (ConvertValue); false for other values.
func CanonicalText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	case time.Time:
		return x.UTC().Format(canonicalTimeLayout), true
	}
	return "", false
}

func convertTo(v any, kind Kind) (any, bool) {
	switch x := v.(type) {
	case int64:
		if kind == KindFloat && x >= -(1<<53) && x <= 1<<53 {
			return float64(x) + 0, true
		}
	case float64:
		if kind == KindInt && x == math.Trunc(x) && math.Abs(x) < 1<<63 {
			return int64(x), true
		}
	case string:
		return parseCanonicalText(x, kind)
	}
	return nil, false
}

// parseCanonicalText reads s as a value of kind when s is exactly that
// value's canonical text.
func parseCanonicalText(s string, kind Kind) (any, bool) {
	var out any
	switch kind {
	case KindInt:
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}
		out = i
	case KindFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, false
		}
		out = f + 0
	case KindBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, false
		}
		out = b
	case KindTime:
		t, err := time.Parse(canonicalTimeLayout, s)
		if err != nil {
			return nil, false
		}
		out = t.UTC()
	default:
		return nil, false
	}
	back, ok := CanonicalText(out)
	return out, ok && back == s
}
