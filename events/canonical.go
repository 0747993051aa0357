package events

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

// Canonical encoding (I17): one byte string per value, so equal values hash
// equal. The closed value set and its bytes:
//
//	null            n
//	bool            t | f
//	int64           i<decimal>;              (any Go integer type within int64)
//	float64         d<shortest round-trip>;  (strconv 'g', -1; -0 → 0; NaN/±Inf rejected)
//	string          s<byte length>:<NFC UTF-8 bytes>
//	time.Time       T<UTC, millisecond precision, 2006-01-02T15:04:05.000Z>
//	[]any           l<count>:<items>
//	map[string]any  m<count>:<key as string><value>…   keys NFC, sorted by UTF-8 bytes
//
// Times are truncated (not rounded) to milliseconds, the precision of a
// spreadsheet serial date. The format is text-like so golden vectors stay readable.

// timePrecision is the fixed precision of canonical times.
const timePrecision = time.Millisecond

const canonicalTimeLayout = "2006-01-02T15:04:05.000Z"

// EncodeCanonical returns the canonical bytes of v.
// Errors: ErrUnsupportedType, ErrNonFinite, ErrInvalidUTF8, ErrDuplicateKey,
// ErrTimeRange, ErrIntRange (wrapped with the offending path).
func EncodeCanonical(v any) ([]byte, error) {
	return AppendCanonical(nil, v)
}

// AppendCanonical appends the canonical bytes of v to dst. Errors as EncodeCanonical.
func AppendCanonical(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, 'n'), nil
	case bool:
		if x {
			return append(dst, 't'), nil
		}
		return append(dst, 'f'), nil
	case string:
		return appendString(dst, x)
	case float64:
		return appendFloat(dst, x)
	case float32:
		return appendFloat(dst, float64(x))
	case time.Time:
		return appendTime(dst, x)
	case []any:
		return appendList(dst, x)
	case map[string]any:
		return appendMap(dst, x)
	}
	if i, ok, err := asInt64(v); ok || err != nil {
		if err != nil {
			return dst, err
		}
		return appendInt(dst, i), nil
	}
	return dst, fmt.Errorf("%w: %T", ErrUnsupportedType, v)
}

func asInt64(v any) (int64, bool, error) {
	switch x := v.(type) {
	case int:
		return int64(x), true, nil
	case int8:
		return int64(x), true, nil
	case int16:
		return int64(x), true, nil
	case int32:
		return int64(x), true, nil
	case int64:
		return x, true, nil
	case uint8:
		return int64(x), true, nil
	case uint16:
		return int64(x), true, nil
	case uint32:
		return int64(x), true, nil
	case uint:
		return uintToInt64(uint64(x))
	case uint64:
		return uintToInt64(x)
	}
	return 0, false, nil
}

func uintToInt64(u uint64) (int64, bool, error) {
	if u > math.MaxInt64 {
		return 0, true, fmt.Errorf("%w: %d", ErrIntRange, u)
	}
	return int64(u), true, nil
}

func appendInt(dst []byte, i int64) []byte {
	dst = append(dst, 'i')
	dst = strconv.AppendInt(dst, i, 10)
	return append(dst, ';')
}

func appendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, ErrNonFinite
	}
	if f == 0 {
		f = 0 // folds -0 into +0
	}
	dst = append(dst, 'd')
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	return append(dst, ';'), nil
}

// NormalizeString returns s in NFC. Errors: ErrInvalidUTF8.
func NormalizeString(s string) (string, error) {
	if isASCIIString(s) {
		return s, nil // valid UTF-8 and already NFC
	}
	if !utf8.ValidString(s) {
		return "", ErrInvalidUTF8
	}
	return norm.NFC.String(s), nil
}

func isASCIIString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func appendString(dst []byte, s string) ([]byte, error) {
	n, err := NormalizeString(s)
	if err != nil {
		return dst, err
	}
	return appendNormalized(dst, n), nil
}

func appendNormalized(dst []byte, s string) []byte {
	dst = append(dst, 's')
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, ':')
	return append(dst, s...)
}

// CanonicalTime returns t in UTC truncated to timePrecision.
// Errors: ErrTimeRange outside years 0001–9999.
func CanonicalTime(t time.Time) (time.Time, error) {
	u := t.UTC().Truncate(timePrecision)
	if y := u.Year(); y < 1 || y > 9999 {
		return time.Time{}, fmt.Errorf("%w: year %d", ErrTimeRange, y)
	}
	return u, nil
}

func appendTime(dst []byte, t time.Time) ([]byte, error) {
	u, err := CanonicalTime(t)
	if err != nil {
		return dst, err
	}
	dst = append(dst, 'T')
	return u.AppendFormat(dst, canonicalTimeLayout), nil
}

func appendList(dst []byte, l []any) ([]byte, error) {
	dst = append(dst, 'l')
	dst = strconv.AppendInt(dst, int64(len(l)), 10)
	dst = append(dst, ':')
	var err error
	for i, item := range l {
		if dst, err = AppendCanonical(dst, item); err != nil {
			return dst, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return dst, nil
}

type mapEntry struct {
	key string
	val any
}

func appendMap(dst []byte, m map[string]any) ([]byte, error) {
	var small [16]mapEntry // most maps fit: no allocation for their entries
	entries, err := sortedEntries(small[:0], m)
	if err != nil {
		return dst, err
	}
	dst = append(dst, 'm')
	dst = strconv.AppendInt(dst, int64(len(entries)), 10)
	dst = append(dst, ':')
	for _, e := range entries {
		dst = appendNormalized(dst, e.key)
		if dst, err = AppendCanonical(dst, e.val); err != nil {
			return dst, fmt.Errorf("%q: %w", e.key, err)
		}
	}
	return dst, nil
}

// sortedEntries appends m's entries, keys normalized, to entries (empty)
// sorted by key. Errors: ErrInvalidUTF8, ErrDuplicateKey.
func sortedEntries(entries []mapEntry, m map[string]any) ([]mapEntry, error) {
	for k, v := range m {
		nk, err := NormalizeString(k)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		entries = append(entries, mapEntry{nk, v})
	}
	slices.SortFunc(entries, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
	for i := 1; i < len(entries); i++ {
		if entries[i].key == entries[i-1].key {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateKey, entries[i].key)
		}
	}
	return entries, nil
}

// Hash returns the canonical hash of v: "xxh64:" followed by 16 lowercase hex
// digits of xxhash64 over EncodeCanonical(v). Equal values hash equal (I17).
// Errors as EncodeCanonical.
func Hash(v any) (string, error) {
	b, err := EncodeCanonical(v)
	if err != nil {
		return "", err
	}
	return HashBytes(b), nil
}

// HashReuse is Hash encoding into *buf, which it keeps for the next call
// (no allocation but the returned string). Errors as EncodeCanonical.
func HashReuse(buf *[]byte, v any) (string, error) {
	b, err := AppendCanonical((*buf)[:0], v)
	*buf = b
	if err != nil {
		return "", err
	}
	return HashBytes(b), nil
}

// HashBytes renders xxhash64 of already-canonical bytes with the "xxh64:" prefix.
func HashBytes(canonical []byte) string {
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(canonical))
	var out [6 + 16]byte
	copy(out[:], "xxh64:")
	hex.Encode(out[6:], sum[:])
	return string(out[:])
}
