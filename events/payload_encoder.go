package events

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The payload encoder writes a payload's canonical bytes straight from its
// struct, in the plan's key order: byte for byte what AppendCanonical gives
// for EncodePayload's map, without building that map (every append encodes
// each event's payload once; the map, its sort and its boxed values were a
// large share of a commit's encoding cost).

// appendPayload appends the canonical bytes of p to dst. Errors:
// encErr (ErrInvalidEvent, *PayloadError) when p is not a catalogue
// payload, valErr (ErrUnsupportedType, ErrInvalidUTF8, …) when one of its
// values has no canonical form.
func appendPayload(dst []byte, p Payload) (out []byte, encErr, valErr error) {
	if r, ok := p.(Recorded); ok {
		m := r.Fields
		if m == nil {
			m = map[string]any{}
		}
		out, valErr = AppendCanonical(dst, m)
		return out, nil, valErr
	}
	e, err := entryOf(p)
	if err != nil {
		return dst, err, nil
	}
	if s, ok := p.(storedForm); ok {
		p = s.stored() // as EncodePayload: the form records keep
	}
	out, valErr = e.plan.appendCanonical(dst, reflect.ValueOf(p))
	return out, nil, valErr
}

// sortKeys records the plan's field indices in canonical key order (by
// bytes; keys are checked NFC and unique, so the map encoding would sort
// them the same way).
func (p *structPlan) sortKeys() {
	p.sorted = make([]int, len(p.list))
	for i := range p.sorted {
		p.sorted[i] = i
		if n, err := NormalizeString(p.list[i].Key); err != nil || n != p.list[i].Key {
			panic(fmt.Sprintf("events: %s key %q is not NFC", p.typ, p.list[i].Key))
		}
	}
	slices.SortFunc(p.sorted, func(a, b int) int { return strings.Compare(p.list[a].Key, p.list[b].Key) })
}

// appendCanonical appends the canonical map of struct value v.
func (p *structPlan) appendCanonical(dst []byte, v reflect.Value) ([]byte, error) {
	return p.appendCanonicalSkip(dst, v, nil)
}

// appendCanonicalSkip is appendCanonical leaving out the keys skip
// reports (nil: none), as if they were deleted from the map.
func (p *structPlan) appendCanonicalSkip(dst []byte, v reflect.Value, skip func(string) bool) ([]byte, error) {
	left := func(f *fieldPlan) bool { return f.omitted(v) || (skip != nil && skip(f.Key)) }
	n := 0
	for i := range p.list {
		if !left(&p.list[i]) {
			n++
		}
	}
	dst = appendHeader(dst, 'm', n)
	for _, i := range p.sorted {
		f := &p.list[i]
		if left(f) {
			continue
		}
		dst = appendNormalized(dst, f.Key)
		var err error
		if dst, err = f.appendCanonical(dst, v.Field(f.index)); err != nil {
			return dst, fmt.Errorf("%q: %w", f.Key, err)
		}
	}
	return dst, nil
}

// omitted reports whether f is left out of struct value v's map.
func (f *fieldPlan) omitted(v reflect.Value) bool {
	return f.OmitEmpty && v.Field(f.index).IsZero()
}

func appendHeader(dst []byte, kind byte, n int) []byte {
	dst = append(dst, kind)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, ':')
}

// appendCanonical appends the canonical bytes of field value v (what
// AppendCanonical gives for fieldPlan.encode(v)).
func (f *fieldPlan) appendCanonical(dst []byte, v reflect.Value) ([]byte, error) {
	switch v.Kind() {
	case reflect.String:
		return appendString(dst, v.String())
	case reflect.Bool:
		return AppendCanonical(dst, v.Bool())
	case reflect.Int64:
		return appendInt(dst, v.Int()), nil
	case reflect.Uint64:
		return appendInt(dst, int64(v.Uint())), nil
	case reflect.Interface:
		return AppendCanonical(dst, v.Interface())
	case reflect.Struct:
		if t := v.Interface().(time.Time); !t.IsZero() {
			return appendTime(dst, t)
		}
		return append(dst, 'n'), nil
	case reflect.Slice:
		return f.appendList(dst, v)
	}
	return appendMapValue(dst, v)
}

func (f *fieldPlan) appendList(dst []byte, v reflect.Value) ([]byte, error) {
	if v.IsNil() {
		return append(dst, 'n'), nil
	}
	dst = appendHeader(dst, 'l', v.Len())
	for i := range v.Len() {
		var err error
		if dst, err = f.elem.appendCanonical(dst, v.Index(i)); err != nil {
			return dst, fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return dst, nil
}

// appendMapValue appends a map field: map[string]any as it is, revisions
// (map[string]uint64) without boxing each number, others through encodeMap.
func appendMapValue(dst []byte, v reflect.Value) ([]byte, error) {
	if v.IsNil() {
		return append(dst, 'n'), nil
	}
	switch m := v.Interface().(type) {
	case map[string]any:
		return appendMap(dst, m)
	case map[string]uint64:
		return appendUintMap(dst, m)
	}
	return AppendCanonical(dst, encodeMap(v))
}

type uintEntry struct {
	key string
	n   uint64
}

// appendUintMap appends m as the canonical map of its values as int64s.
func appendUintMap(dst []byte, m map[string]uint64) ([]byte, error) {
	var small [16]uintEntry
	entries := small[:0]
	for k, n := range m {
		nk, err := NormalizeString(k)
		if err != nil {
			return dst, fmt.Errorf("map key: %w", err)
		}
		entries = append(entries, uintEntry{nk, n})
	}
	slices.SortFunc(entries, func(a, b uintEntry) int { return strings.Compare(a.key, b.key) })
	for i := 1; i < len(entries); i++ {
		if entries[i].key == entries[i-1].key {
			return dst, fmt.Errorf("%w: %q", ErrDuplicateKey, entries[i].key)
		}
	}
	dst = appendHeader(dst, 'm', len(entries))
	for _, e := range entries {
		dst = appendInt(appendNormalized(dst, e.key), int64(e.n))
	}
	return dst, nil
}
