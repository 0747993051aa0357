package events

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// Derived keys: a record leaves out the payload keys reading it derives
// again from the rest of the same record, its stream included
// (effect.queued and entity.persisted schema 3). A key is left out only when its value equals
// its derivation, so every event reads back exactly as it was appended; a
// key present in a record always wins over the derivation.

// EffectIDOf is an effect's deterministic id: the same binding and
// stream_sequence always give the same id, so a replayed log queues the
// same effects (I09).
func EffectIDOf(binding string, streamSequence uint64) string {
	var stack [64]byte // most bindings fit: no allocation but the id
	buf := append(append(stack[:0], binding...), '/')
	buf = binary.BigEndian.AppendUint64(buf, streamSequence)
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(buf))
	var id [2 + 16]byte // "fx" and %016x of the sum
	copy(id[:], "fx")
	hex.Encode(id[2:], sum[:])
	return string(id[:])
}

// EffectPayloadHash is an effect's payload hash: over op, tab, anchor and
// values (I09). Errors: those of EncodeCanonical (a value without
// canonical form).
func EffectPayloadHash(op Op, tab, anchor string, values map[string]any) (string, error) {
	bp := payloadHashBufs.Get().(*[]byte)
	b, err := appendEffectPayload((*bp)[:0], op, tab, anchor, values)
	var h string
	if err == nil {
		h = HashBytes(b)
	}
	if cap(b) <= maxPooledEncodeBuf {
		*bp = b[:0]
		payloadHashBufs.Put(bp)
	}
	return h, err
}

// payloadHashBufs holds the buffers EffectPayloadHash encodes into (every
// queued effect is hashed when it is decided and when its record is
// encoded).
var payloadHashBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1<<10); return &b }}

// appendEffectPayload appends the canonical map an effect's payload hash
// covers, {anchor, op, tab, values} (null values for none), keys in
// canonical order: what AppendCanonical gives for that map, without
// building it. Errors as AppendCanonical.
func appendEffectPayload(dst []byte, op Op, tab, anchor string, values map[string]any) ([]byte, error) {
	dst = appendHeader(dst, 'm', 4)
	var err error
	for _, kv := range [...][2]string{{"anchor", anchor}, {"op", string(op)}, {"tab", tab}} {
		if dst, err = appendString(appendNormalized(dst, kv[0]), kv[1]); err != nil {
			return dst, fmt.Errorf("%q: %w", kv[0], err)
		}
	}
	dst = appendNormalized(dst, "values")
	if values == nil {
		return append(dst, 'n'), nil
	}
	if dst, err = appendMap(dst, values); err != nil {
		return dst, fmt.Errorf("%q: %w", "values", err)
	}
	return dst, nil
}

// compactor is a payload whose record leaves out derived keys: compact
// deletes from m (its EncodePayload map, of the record at version of
// stream; version 0 = not known) the keys whose values equal their
// derivation.
type compactor interface {
	compact(stream string, version uint64, m map[string]any)
}

// compactRecord deletes p's derived keys from m, its EncodePayload map.
func compactRecord(p Payload, stream string, version uint64, m map[string]any) {
	if c, ok := p.(compactor); ok {
		c.compact(stream, version, m)
	}
}

// derivedSince is the schema of effect.queued and entity.persisted from
// which records leave out derived keys.
const derivedSince = 3

// fromEnvelope fills in the keys a record of type t at schema and version
// of stream left out because its envelope names them (binding and
// stream_sequence; entity, id and created), in m, the record's own map.
func fromEnvelope(t Type, schema uint32, stream string, version uint64, m map[string]any) map[string]any {
	if schema < derivedSince {
		return m
	}
	_, hasSeq := m["stream_sequence"]
	_, hasCreated := m["created"]
	switch {
	case t == TypeEffectQueued && !hasSeq:
		m["stream_sequence"] = int64(version)
	case t == TypeEntityPersisted && !hasCreated:
		m["created"] = version == 1
	}
	return fromStream(t, stream, m)
}

// fromStream fills in the keys a record of type t on stream left out
// because its stream names them (binding; entity and id).
func fromStream(t Type, stream string, m map[string]any) map[string]any {
	switch t {
	case TypeEffectQueued:
		binding, ok := strings.CutPrefix(stream, "outbox/")
		if _, has := m["binding"]; has || !ok {
			return m
		}
		m["binding"] = binding
	case TypeEntityPersisted:
		_, hasE := m["entity"]
		_, hasI := m["id"]
		rest, ok := strings.CutPrefix(stream, "entity/")
		entity, id, ok2 := strings.Cut(rest, "/")
		if hasE || hasI || !ok || !ok2 {
			return m
		}
		m["entity"], m["id"] = entity, id
	}
	return m
}

// compact leaves out binding (its stream names it), null values (absent
// reads as null), stream_sequence (the record's version), effect_id
// (derived from binding and stream_sequence), anchor (when it is the id)
// and payload_hash (derived from op, tab, anchor and values; for
// values_of after the values are filled in, by ValueResolver).
func (q EffectQueued) compact(stream string, version uint64, m map[string]any) {
	o := q.leftOut(stream, version)
	for _, k := range [...]string{"binding", "stream_sequence", "values", "effect_id", "anchor", "payload_hash"} {
		if o.skips(k) {
			delete(m, k)
		}
	}
}

// queuedOut is what an effect.queued record leaves out.
type queuedOut struct{ binding, seq, values, id, anchor, hash bool }

// leftOut says which keys q's record at version of stream leaves out
// (compact deletes them from the map; appendQueued never writes them):
// the values when the record keeps none (absent reads as null: a delete,
// or values_of), and a payload hash read without its values (still
// derived) or equal to its derivation.
func (q EffectQueued) leftOut(stream string, version uint64) queuedOut {
	o := queuedOut{
		binding: isOutboxStreamOf(stream, q.Binding),
		seq:     version != 0 && q.StreamSequence == version,
		values:  q.ValuesOf != 0 || q.Values == nil,
		id:      q.EffectID == EffectIDOf(q.Binding, q.StreamSequence),
		anchor:  q.Anchor == q.ID,
		hash:    q.PayloadHash == hashFromValues,
	}
	if !o.hash {
		h, err := EffectPayloadHash(q.Op, q.Tab, q.Anchor, q.Values)
		o.hash = err == nil && h == q.PayloadHash
	}
	return o
}

// skips reports whether the record leaves out key.
func (o queuedOut) skips(key string) bool {
	switch key {
	case "binding":
		return o.binding
	case "stream_sequence":
		return o.seq
	case "values":
		return o.values
	case "effect_id":
		return o.id
	case "anchor":
		return o.anchor
	case "payload_hash":
		return o.hash
	}
	return false
}

// isOutboxStreamOf reports whether stream is OutboxStream(binding),
// without building that string.
func isOutboxStreamOf(stream, binding string) bool {
	rest, ok := strings.CutPrefix(stream, "outbox/")
	return ok && rest == binding
}

// hashFromValues is the payload hash of a values_of effect.queued read
// without its values: ValueResolver derives it with them. (A present
// empty payload_hash stays empty: only an absent one is derived.)
const hashFromValues = "\x00derived from values"

// expandQueued fills in the keys a schema-3 effect.queued record left out
// (payload_hash of a values_of record is hashFromValues until its values
// are filled in), in m.
func expandQueued(m map[string]any) map[string]any {
	_, hasID := m["effect_id"]
	_, hasAnchor := m["anchor"]
	_, hasHash := m["payload_hash"]
	if hasID && hasAnchor && hasHash {
		return m
	}
	binding, okB := m["binding"].(string)
	seq, okS := m["stream_sequence"].(int64)
	if !hasID && okB && okS && seq >= 0 {
		m["effect_id"] = EffectIDOf(binding, uint64(seq))
	}
	if id, ok := m["id"].(string); !hasAnchor && ok {
		m["anchor"] = id
	}
	if !hasHash {
		if h, ok := queuedMapHash(m); ok {
			m["payload_hash"] = h
		}
	}
	return m
}

// queuedMapHash derives the payload hash of an effect.queued map that
// holds its values inline.
func queuedMapHash(m map[string]any) (string, bool) {
	if _, ref := m["values_of"]; ref {
		return hashFromValues, true
	}
	op, _ := m["op"].(string)
	tab, _ := m["tab"].(string)
	anchor, _ := m["anchor"].(string)
	values, ok := m["values"].(map[string]any)
	if !ok && m["values"] != nil {
		return "", false
	}
	h, err := EffectPayloadHash(Op(op), tab, anchor, values)
	return h, err == nil
}

// withDerivedHash fills in the payload hash of q, whose values were just
// filled in, when its record left the hash out.
func (q EffectQueued) withDerivedHash() (EffectQueued, error) {
	if q.PayloadHash != hashFromValues {
		return q, nil
	}
	h, err := EffectPayloadHash(q.Op, q.Tab, q.Anchor, q.Values)
	if err != nil {
		return q, err
	}
	q.PayloadHash = h
	return q, nil
}

// compact leaves out entity and id (its stream names them), created
// (true exactly at version 1) and the revisions of a first create (every
// field at revision 1).
func (p EntityPersisted) compact(stream string, version uint64, m map[string]any) {
	o := p.leftOut(stream, version)
	for _, k := range [...]string{"entity", "id", "created", "revisions"} {
		if o.skips(k) {
			delete(m, k)
		}
	}
}

// persistedOut is what an entity.persisted record leaves out.
type persistedOut struct{ ids, created, revisions bool }

// leftOut says which keys p's record at version of stream leaves out
// (compact deletes them from the map; appendPersisted never writes them).
func (p EntityPersisted) leftOut(stream string, version uint64) persistedOut {
	return persistedOut{
		ids:       !strings.Contains(p.Entity, "/") && stream == EntityStream(p.Entity, p.ID),
		created:   version != 0 && p.Created == (version == 1),
		revisions: firstRevisions(p),
	}
}

// skips reports whether the record leaves out key.
func (o persistedOut) skips(key string) bool {
	switch key {
	case "entity", "id":
		return o.ids
	case "created":
		return o.created
	case "revisions":
		return o.revisions
	}
	return false
}

// firstRevisions reports whether p's revisions are those of a first
// create: one per field, every one 1.
func firstRevisions(p EntityPersisted) bool {
	if len(p.Revisions) == 0 || len(p.Revisions) != len(p.Fields) {
		return false
	}
	for k, r := range p.Revisions {
		if _, ok := p.Fields[k]; !ok || r != 1 {
			return false
		}
	}
	return true
}

// expandPersisted fills in the revisions a schema-3 entity.persisted
// record left out, in m: every field at revision 1.
func expandPersisted(m map[string]any) map[string]any {
	if _, ok := m["revisions"]; ok {
		return m
	}
	fields, ok := m["fields"].(map[string]any)
	if !ok || len(fields) == 0 {
		return m
	}
	revs := make(map[string]any, len(fields))
	for k := range fields {
		revs[k] = int64(1)
	}
	m["revisions"] = revs
	return m
}
