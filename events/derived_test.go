package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// derivedCommit is one commit as the engine writes a created row: an
// entity.persisted (every field at revision 1), the System row's
// effect.queued referring to it (values_of) and the Input row's with its
// values inline; ids, anchors and payload hashes as DecideQueue derives them.
func derivedCommit(t *testing.T) (Unit, []Payload) {
	t.Helper()
	fields := map[string]any{"name": "Goroka", "alt": int64(5282)}
	p := EntityPersisted{Entity: "Airport", ID: "1", Created: true, Fields: fields, Revisions: map[string]uint64{"name": 1, "alt": 1}}
	sys := derivedQueued(t, "b1", "Airport_System", map[string]any{"name": "Goroka", "alt": int64(5282), "id": "1"})
	sys.ValuesOf, sys.KeyColumn = 1, "id"
	in := derivedQueued(t, "b2", "Airport_Input", map[string]any{"id": "1", "notes": ""})
	return Unit{Streams: []StreamAppend{
		{Stream: EntityStream("Airport", "1"), Events: []Event{{Payload: p}}},
		{Stream: OutboxStream("b1"), Events: []Event{{Payload: sys}}},
		{Stream: OutboxStream("b2"), Events: []Event{{Payload: in}}},
	}}, []Payload{p, sys, in}
}

func derivedQueued(t *testing.T, binding, tab string, values map[string]any) EffectQueued {
	t.Helper()
	h, err := EffectPayloadHash(OpAppend, tab, "1", values)
	must(t, err)
	return EffectQueued{EffectID: EffectIDOf(binding, 1), Spreadsheet: "ss", Tab: tab, Anchor: "1", Binding: binding,
		StreamSequence: 1, Op: OpAppend, Values: values, PayloadHash: h, Entity: "Airport", ID: "1"}
}

// storedKeys is the payload map a record of the log keeps at seq.
func storedKeys(t *testing.T, l *Log, seq uint64) map[string]any {
	t.Helper()
	body := rawRecord(t, l, seq)
	_, payload, err := parseRecord(body[:len(body)-checksumLen], nil)
	must(t, err)
	m, err := decodePayload(payload, nil)
	must(t, err)
	return m
}

// A created row's records leave out what reading derives (binding,
// stream_sequence, effect_id, anchor, payload_hash; entity, id, created
// and the revisions of a first create), every read
// fills them in to the appended payloads, and a read event marshals to
// the stored bytes (replication ships the log's bytes).
func TestDerivedKeysAreLeftOutAndReadBackAsAppended(t *testing.T) {
	l, _ := openTestLog(t)
	u, want := derivedCommit(t)
	res, err := l.Append(acquire(t, l, "w").Fence(), u)
	must(t, err)
	for i, left := range [][]string{{"entity", "id", "created", "revisions"}, {"binding", "stream_sequence", "effect_id", "anchor", "payload_hash", "values"},
		{"binding", "stream_sequence", "effect_id", "anchor", "payload_hash"}} {
		m := storedKeys(t, l, res[0].First+uint64(i))
		for _, k := range left {
			if _, ok := m[k]; ok {
				t.Fatalf("record %d keeps the derived key %s", i, k)
			}
		}
	}
	evs := readAll(t, l, res[0].First)
	for i, e := range evs {
		if !reflect.DeepEqual(e.Payload, want[i]) {
			t.Fatalf("read %#v\nwant %#v", e.Payload, want[i])
		}
		again, err := MarshalRecord(e)
		must(t, err)
		if string(again) != string(rawRecord(t, l, e.Seq)) {
			t.Fatalf("event %d marshals to other bytes than the log keeps", e.Seq)
		}
	}
}

// A schema-2 record of either type (every key stored) reads as the same
// payload as the schema-3 record of the same event.
func TestDerivedKeysSchema2RecordsReadAsSchema3(t *testing.T) {
	_, want := derivedCommit(t)
	l, _ := openTestLog(t)
	var streams []StreamAppend
	for _, p := range want {
		m, err := EncodePayload(p)
		must(t, err)
		stream := EntityStream("Airport", "1")
		if q, ok := p.(EffectQueued); ok {
			stream = OutboxStream(q.Binding)
		}
		streams = append(streams, StreamAppend{Stream: stream, Events: []Event{{Payload: Recorded{Type: p.EventType(), Schema: 2, Fields: m}}}})
	}
	res, err := l.Append(acquire(t, l, "w").Fence(), Unit{Streams: streams})
	must(t, err)
	for i, e := range readAll(t, l, res[0].First) {
		if !reflect.DeepEqual(e.Payload, want[i]) {
			t.Fatalf("schema 2 read %#v\nwant %#v", e.Payload, want[i])
		}
	}
}

// Values that differ from their derivation are stored as they are: an id
// from another binding, an anchor that is not the id (or empty), a
// payload hash of other values (or empty), a revision above 1, a binding
// or entity its stream does not name (an entity name with a slash), a
// stream_sequence or created flag its version does not give.
func TestDerivedKeysOnlyLeftOutWhenEqualToTheirDerivation(t *testing.T) {
	q := derivedQueued(t, "b2", "Airport_Input", map[string]any{"id": "1"})
	q.EffectID, q.PayloadHash = "fx-other", "xxh64:0000000000000000"
	empty := q
	q.Anchor, empty.Anchor, empty.PayloadHash = "A1", "", ""
	p := EntityPersisted{Entity: "Air/port", ID: "1", Fields: map[string]any{"name": "x"}, Revisions: map[string]uint64{"name": 2}}
	slashID := EntityPersisted{Entity: "Airport", ID: "a/b", Created: true, Fields: map[string]any{"name": "x"}, Revisions: map[string]uint64{"name": 1}}
	l, _ := openTestLog(t)
	u := Unit{Streams: []StreamAppend{
		{Stream: EntityStream("Air/port", "1"), Events: []Event{{Payload: p}}},
		{Stream: OutboxStream("b9"), Events: []Event{{Payload: q}, {Payload: empty}}},
		{Stream: EntityStream("Airport", "a/b"), Events: []Event{{Payload: slashID}}},
	}}
	res, err := l.Append(acquire(t, l, "w").Fence(), u)
	must(t, err)
	want := []Payload{p, q, empty, slashID}
	for i, e := range readAll(t, l, res[0].First) {
		if !reflect.DeepEqual(e.Payload, want[i]) {
			t.Fatalf("read %#v\nwant %#v", e.Payload, want[i])
		}
	}
}

// DecodePayload of a schema-3 map fills the derived keys in without
// modifying the map it was given.
func TestDerivedKeysDecodeLeavesItsArgumentAlone(t *testing.T) {
	_, want := derivedCommit(t)
	m, err := EncodePayload(want[2])
	must(t, err)
	want[2].(EffectQueued).compact("", 0, m)
	n := len(m)
	p, err := DecodePayload(TypeEffectQueued, 3, m)
	must(t, err)
	if !reflect.DeepEqual(p, want[2]) || len(m) != n {
		t.Fatalf("decoded %#v (map now %d keys, was %d)", p, len(m), n)
	}
}

// appendQueued writes byte for byte what encodeCompacted (the canonical
// map with the derived keys deleted) writes, whichever keys are derived.
func TestAppendQueuedMatchesCompacted(t *testing.T) {
	values := map[string]any{"name": "Goroka", "alt": int64(5282), "id": "1", "gone": nil}
	base := derivedQueued(t, "b1", "Airport_System", values)
	variants := []func(q *EffectQueued){
		func(q *EffectQueued) {},
		func(q *EffectQueued) { q.ValuesOf, q.KeyColumn = 1, "id" },
		func(q *EffectQueued) { q.ValuesOf, q.PayloadHash = 1, hashFromValues },
		func(q *EffectQueued) { q.Values, q.Op = nil, OpDelete },
		func(q *EffectQueued) { q.Values = map[string]any{} },
		func(q *EffectQueued) { q.Anchor = "other" },
		func(q *EffectQueued) { q.EffectID = "fx-made-up" },
		func(q *EffectQueued) { q.PayloadHash = "" },
		func(q *EffectQueued) { q.PayloadHash = "xxh64:0000000000000000" },
		func(q *EffectQueued) { q.ExpectedHash = "xxh64:1111111111111111" },
		func(q *EffectQueued) { q.StreamSequence = 7 },
	}
	for i, vary := range variants {
		q := base
		vary(&q)
		for _, stream := range []string{OutboxStream("b1"), OutboxStream("b2"), "outbox", "effects/b1"} {
			for _, version := range []uint64{0, 1, 2, 7} {
				e := Event{Payload: q}
				want, err := encodeCompacted(nil, stream, version, &e)
				if err != nil {
					t.Fatal(err)
				}
				got, err := appendQueued(nil, stream, version, q)
				if err != nil || string(got) != string(want) {
					t.Fatalf("variant %d %s v%d:\n got  %q %v\n want %q", i, stream, version, got, err, want)
				}
			}
		}
	}
	bad := base
	bad.Values = map[string]any{"bad": struct{}{}}
	if _, err := appendQueued(nil, OutboxStream("b1"), 1, bad); !errors.Is(err, ErrInvalidEvent) {
		t.Fatalf("an unsupported value: %v", err)
	}
}

// EffectIDOf and EffectPayloadHash give what they gave through fmt and a
// canonical map: ids and hashes are stored and derived again on reads.
func TestEffectIDAndPayloadHashAsBefore(t *testing.T) {
	for _, binding := range []string{"", "b1", "0123456789abcdef", strings.Repeat("long", 40)} {
		for _, seq := range []uint64{0, 1, 255, 1 << 40} {
			var b [8]byte
			binary.BigEndian.PutUint64(b[:], seq)
			want := fmt.Sprintf("fx%016x", xxhash.Sum64(append([]byte(binding+"/"), b[:]...)))
			if got := EffectIDOf(binding, seq); got != want {
				t.Fatalf("EffectIDOf(%q, %d) = %q, want %q", binding, seq, got, want)
			}
		}
	}
	big := map[string]any{}
	for i := range 100 {
		big[fmt.Sprint("col", i)] = strings.Repeat("v", i)
	}
	for _, values := range []map[string]any{nil, {}, {"name": "Goroka", "alt": int64(5282), "gone": nil, "é": 1.5}, big} {
		for _, anchor := range []string{"", "1", "e\u0301"} {
			var v any
			if values != nil {
				v = values
			}
			want, werr := Hash(map[string]any{"op": string(OpUpdate), "tab": "T_System", "anchor": anchor, "values": v})
			got, err := EffectPayloadHash(OpUpdate, "T_System", anchor, values)
			if got != want || (err == nil) != (werr == nil) {
				t.Fatalf("EffectPayloadHash(%q, %v) = %q, %v; want %q, %v", anchor, values, got, err, want, werr)
			}
		}
	}
	for _, bad := range []struct {
		anchor string
		values map[string]any
	}{{"\xff", nil}, {"1", map[string]any{"x": struct{}{}}}, {"1", map[string]any{"\xff": 1}}} {
		if _, err := EffectPayloadHash(OpAppend, "T", bad.anchor, bad.values); err == nil {
			t.Fatalf("EffectPayloadHash(%q, %v): no error", bad.anchor, bad.values)
		}
	}
}
