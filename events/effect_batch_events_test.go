package events

import (
	"errors"
	"reflect"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A batch settle event stands for exactly the per-effect events it lists:
// every fact of effect.claimed / effect.applied is in the batch.
func TestEffectsBatchEachGivesThePerEffectPayloads(t *testing.T) {
	claimed := EffectsClaimed{ClaimToken: "tok", Epoch: 3, Attempts: map[string]int64{"fx2": 2, "fx1": 1}}
	want := []Payload{EffectClaimed{EffectID: "fx1", ClaimToken: "tok", Attempt: 1, Epoch: 3},
		EffectClaimed{EffectID: "fx2", ClaimToken: "tok", Attempt: 2, Epoch: 3}}
	if got := claimed.Each(); !reflect.DeepEqual(got, want) {
		t.Fatalf("claimed.Each() = %#v, want %#v", got, want)
	}
	applied := EffectsApplied{ClaimToken: "tok", Via: "dispatch", Written: map[string]string{"fx1": "h1", "fx2": "h2"}}
	want = []Payload{EffectApplied{EffectID: "fx1", ClaimToken: "tok", WrittenHash: "h1", Via: "dispatch"},
		EffectApplied{EffectID: "fx2", ClaimToken: "tok", WrittenHash: "h2", Via: "dispatch"}}
	if got := applied.Each(); !reflect.DeepEqual(got, want) {
		t.Fatalf("applied.Each() = %#v, want %#v", got, want)
	}
}

// Batch settle events survive a record's round trip through the log.
func TestEffectsBatchRoundTripsThroughTheLog(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w").Fence()
	claimed := EffectsClaimed{ClaimToken: "tok", Epoch: 1, Attempts: map[string]int64{"fx1": 1, "fx2": 1}}
	applied := EffectsApplied{ClaimToken: "tok", Via: "dispatch", Written: map[string]string{"fx1": "h1", "fx2": "h2"}}
	stream := DispatchStream("ss")
	_, err := l.Append(f, Unit{Streams: []StreamAppend{{Stream: stream, ExpectedVersion: 0, Events: []Event{{Payload: claimed}, {Payload: applied}}}}})
	must(t, err)
	var got []Payload
	must(t, l.ReadStream(stream, 1, func(e Event) error { got = append(got, e.Payload); return nil }))
	if !reflect.DeepEqual(got, []Payload{claimed, applied}) {
		t.Fatalf("read back %#v", got)
	}
}

// persistedAndQueued is one commit: an entity.persisted and the
// effect.queued of its System row, which refers to it for its values.
func persistedAndQueued() (Unit, map[string]any) {
	fields := map[string]any{"name": "Goroka", "alt": int64(5282)}
	values := map[string]any{"name": "Goroka", "alt": int64(5282), "id": "1"}
	p := EntityPersisted{Entity: "Airport", ID: "1", Created: true, Fields: fields, Revisions: map[string]uint64{"name": 1, "alt": 1}}
	q := EffectQueued{EffectID: "fx1", Tab: "Airport_System", Anchor: "1", Binding: "b1", StreamSequence: 1, Op: OpAppend,
		Values: values, Entity: "Airport", ID: "1", ValuesOf: 1, KeyColumn: "id"}
	return Unit{Streams: []StreamAppend{
		{Stream: EntityStream("Airport", "1"), ExpectedVersion: 0, Events: []Event{{Payload: p}}},
		{Stream: OutboxStream("b1"), ExpectedVersion: 0, Events: []Event{{Payload: q}}},
	}}, values
}

// An effect.queued whose values are its entity.persisted's is stored
// without them (values_of), and every read of the log fills them in: in
// order, from the queued record itself (through the stream index), and by
// stream.
func TestReadsFillTheValuesAQueuedEffectRefersTo(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w").Fence()
	u, values := persistedAndQueued()
	res, err := l.Append(f, u)
	must(t, err)
	queuedSeq := res[0].Last
	raw := rawRecord(t, l, queuedSeq)
	if stored, err := DecodeRecord(queuedSeq, raw); err != nil || stored.Payload.(EffectQueued).Values != nil {
		t.Fatalf("the stored record holds values: %#v, %v", stored.Payload, err)
	}
	check := func(how string, e Event) {
		if q := e.Payload.(EffectQueued); !reflect.DeepEqual(q.Values, values) {
			t.Fatalf("%s: values %#v, want %#v", how, q.Values, values)
		}
	}
	evs := readAll(t, l, 1)
	check("in order", evs[len(evs)-1])
	check("from the queued record", readAll(t, l, queuedSeq)[0])
	must(t, l.ReadStream(OutboxStream("b1"), 1, func(e Event) error { check("by stream", e); return nil }))
	again, err := MarshalRecord(evs[len(evs)-1])
	must(t, err)
	if string(again) != string(raw) {
		t.Fatal("a read event marshals to other bytes than the log keeps (replication ships the log's bytes)")
	}
}

// A reference to a persisted event the resolver has not seen in the
// commit is malformed, never a silent empty row.
func TestValueResolverRejectsAReferenceItHasNotSeen(t *testing.T) {
	q := EffectQueued{EffectID: "fx1", Binding: "b1", Entity: "Airport", ID: "1", ValuesOf: 4}
	e := Event{Seq: 9, Commit: "c9", Payload: q}
	if err := NewValueResolver().Resolve(&e); !errors.Is(err, ErrMalformedPayload) {
		t.Fatalf("Resolve = %v, want ErrMalformedPayload", err)
	}
}

// effect.queued at schema 1 (values inline, as every log before the
// compact format holds) still decodes, upcast, with its values.
func TestQueuedSchema1DecodesWithItsValuesInline(t *testing.T) {
	fields := map[string]any{"effect_id": "fx1", "binding": "b1", "values": map[string]any{"id": "1"}, "op": "append"}
	p, err := DecodePayload(TypeEffectQueued, 1, fields)
	must(t, err)
	if q := p.(EffectQueued); q.ValuesOf != 0 || !reflect.DeepEqual(q.Values, map[string]any{"id": "1"}) {
		t.Fatalf("schema 1 decoded as %#v", q)
	}
	both := map[string]any{"effect_id": "fx1", "binding": "b1", "values": map[string]any{"id": "1"}, "values_of": int64(1)}
	if _, err := DecodePayload(TypeEffectQueued, 2, both); !errors.Is(err, ErrMalformedPayload) {
		t.Fatalf("a record with values and values_of decoded: %v", err)
	}
}

// rawRecord is the bytes the log keeps under seq.
func rawRecord(t *testing.T, l *Log, seq uint64) []byte {
	t.Helper()
	var out []byte
	must(t, l.view(func(tx *bolt.Tx) error {
		out = append(out, tx.Bucket(bucketEvents).Get(u64(seq))...)
		return nil
	}))
	return out
}
