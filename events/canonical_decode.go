package events

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxCanonicalDepth bounds nesting so hostile input cannot exhaust the stack.
const maxCanonicalDepth = 64

// DecodeCanonical parses canonical bytes into a value of the closed set:
// nil, bool, int64, float64, string, time.Time, []any, map[string]any.
// It rejects anything EncodeCanonical would not produce (non-NFC strings,
// unsorted or duplicate keys, -0, non-shortest floats, trailing bytes) with
// ErrMalformedCanonical; it never panics.
func DecodeCanonical(b []byte) (any, error) {
	return decodeCanonical(b, nil)
}

// decodeCanonical is DecodeCanonical sharing map keys through in (may be nil).
func decodeCanonical(b []byte, in *interner) (any, error) {
	d := decoder{buf: b, in: in}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	if d.pos != len(b) {
		return nil, d.fail("trailing bytes")
	}
	return v, nil
}

type decoder struct {
	buf []byte
	pos int
	in  *interner // shares repeated map keys; nil = none
	// scratch holds the canonical rendering of a parsed number, to compare
	// with the input without allocating.
	scratch [32]byte
}

// maxInterned bounds an interner, so hostile input with ever new keys
// cannot grow it without limit.
const maxInterned = 4096

// interner hands out one string per distinct byte sequence it was asked
// for (map keys, event types and tokens repeat in every record), so a log
// read allocates each only once. Not safe for concurrent use.
type interner struct {
	m map[string]string
}

func newInterner() *interner { return &interner{m: map[string]string{}} }

// get returns the shared string for b, or ok = false when b is new; then
// the caller validates it and calls put.
func (in *interner) get(b []byte) (s string, ok bool) {
	if in == nil {
		return "", false
	}
	s, ok = in.m[string(b)] // no allocation for the lookup
	return s, ok
}

func (in *interner) put(s string) {
	if in != nil && len(in.m) < maxInterned {
		in.m[s] = s
	}
}

// intern returns b as a string, shared through in when it is not nil.
func (in *interner) intern(b []byte) string {
	if s, ok := in.get(b); ok {
		return s
	}
	s := string(b)
	in.put(s)
	return s
}

func (d *decoder) fail(reason string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformedCanonical, reason, d.pos)
}

func (d *decoder) value(depth int) (any, error) {
	if depth > maxCanonicalDepth {
		return nil, d.fail("nesting too deep")
	}
	if d.pos >= len(d.buf) {
		return nil, d.fail("truncated")
	}
	tag := d.buf[d.pos]
	d.pos++
	switch tag {
	case 'n':
		return nil, nil
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'i':
		return d.int()
	case 'd':
		return d.float()
	case 's':
		return d.string(false)
	case 'T':
		return d.time()
	case 'l':
		return d.list(depth)
	case 'm':
		return d.mapValue(depth)
	}
	return nil, d.fail(fmt.Sprintf("unknown tag %q", tag))
}

// until returns the bytes up to (not including) the terminator and skips it.
func (d *decoder) until(term byte) ([]byte, error) {
	i := bytes.IndexByte(d.buf[d.pos:], term)
	if i < 0 {
		return nil, d.fail("missing terminator")
	}
	out := d.buf[d.pos : d.pos+i]
	d.pos += i + 1
	return out, nil
}

func (d *decoder) int() (int64, error) {
	raw, err := d.until(';')
	if err != nil {
		return 0, err
	}
	i, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || string(strconv.AppendInt(d.scratch[:0], i, 10)) != string(raw) {
		return 0, d.fail("bad integer")
	}
	return i, nil
}

func (d *decoder) float() (float64, error) {
	raw, err := d.until(';')
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, d.fail("bad float")
	}
	if string(strconv.AppendFloat(d.scratch[:0], f, 'g', -1, 64)) != string(raw) || (f == 0 && math.Signbit(f)) {
		return 0, d.fail("float not in shortest form")
	}
	return f, nil
}

func (d *decoder) count() (int, error) {
	raw, err := d.until(':')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil || n < 0 || strconv.Itoa(n) != string(raw) || n > len(d.buf) {
		return 0, d.fail("bad length")
	}
	return n, nil
}

func (d *decoder) string(shared bool) (string, error) {
	n, err := d.count()
	if err != nil {
		return "", err
	}
	if n > len(d.buf)-d.pos {
		return "", d.fail("string truncated")
	}
	raw := d.buf[d.pos : d.pos+n]
	d.pos += n
	if shared {
		if s, ok := d.in.get(raw); ok {
			return s, nil // validated when it was first seen
		}
	}
	s := string(raw)
	if !isASCII(raw) && (!utf8.ValidString(s) || !norm.NFC.IsNormalString(s)) {
		return "", d.fail("string not NFC UTF-8")
	}
	if shared {
		d.in.put(s)
	}
	return s, nil
}

// isASCII reports whether b is pure ASCII, which is valid UTF-8 in NFC.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func (d *decoder) time() (time.Time, error) {
	n := len(canonicalTimeLayout)
	if len(d.buf)-d.pos < n {
		return time.Time{}, d.fail("time truncated")
	}
	raw := string(d.buf[d.pos : d.pos+n])
	d.pos += n
	t, err := time.Parse(canonicalTimeLayout, raw)
	if err != nil || t.Format(canonicalTimeLayout) != raw {
		return time.Time{}, d.fail("bad time")
	}
	return t.UTC(), nil
}

func (d *decoder) list(depth int) ([]any, error) {
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, min(n, 1024))
	for range n {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (d *decoder) mapValue(depth int) (map[string]any, error) {
	n, err := d.count()
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, min(n, 1024))
	prev := ""
	for i := range n {
		k, err := d.key()
		if err != nil {
			return nil, err
		}
		if i > 0 && k <= prev {
			return nil, d.fail("map keys not strictly sorted")
		}
		if out[k], err = d.value(depth + 1); err != nil {
			return nil, err
		}
		prev = k
	}
	return out, nil
}

func (d *decoder) key() (string, error) {
	if d.pos >= len(d.buf) || d.buf[d.pos] != 's' {
		return "", d.fail("map key is not a string")
	}
	d.pos++
	return d.string(d.in != nil)
}
