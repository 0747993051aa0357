package events

import (
	"encoding/base64"
	"encoding/hex"
	"maps"
	"slices"
)

// Packed batch settlements (schema 2 of effect.batch_claimed and
// effect.batch_applied). A dispatch's batch lists every effect it settles
// by id, "fx" and 16 hex digits, each with the same attempt or a 16-hex
// written hash: 25 and 43 bytes an effect in a canonical map. A schema-2
// record whose ids (and hashes) all have that form, and whose attempts
// are all equal, stores instead one string "packed": the 8 bytes each id
// spells (‖ the 8 bytes its hash spells), sorted by id, in unpadded
// base64url (11 and 22 bytes an effect), and for a claim one "attempt".
// Reading expands them back into the map, so a read event equals the
// appended one; a batch of any other shape keeps its map.

// packedKey and attemptKey are the keys a packed batch record stores.
const (
	packedKey  = "packed"
	attemptKey = "attempt"
)

var packedEncoding = base64.RawURLEncoding

// compact packs the attempts when every id has the effect id form and
// every attempt is the same.
func (b EffectsClaimed) compact(_ string, _ uint64, m map[string]any) {
	if len(b.Attempts) == 0 {
		return
	}
	ids := slices.Sorted(maps.Keys(b.Attempts))
	attempt := b.Attempts[ids[0]]
	buf := make([]byte, 0, 8*len(ids))
	for _, id := range ids {
		var ok bool
		if buf, ok = appendHex8(buf, id, "fx"); !ok || b.Attempts[id] != attempt {
			return
		}
	}
	delete(m, "attempts")
	m[packedKey], m[attemptKey] = packedEncoding.EncodeToString(buf), attempt
}

// compact packs the written hashes when every id has the effect id form
// and every hash is 16 lowercase hex digits.
func (b EffectsApplied) compact(_ string, _ uint64, m map[string]any) {
	if len(b.Written) == 0 {
		return
	}
	buf := make([]byte, 0, 16*len(b.Written))
	for _, id := range slices.Sorted(maps.Keys(b.Written)) {
		var ok1, ok2 bool
		buf, ok1 = appendHex8(buf, id, "fx")
		buf, ok2 = appendHex8(buf, b.Written[id], "")
		if !ok1 || !ok2 {
			return
		}
	}
	delete(m, "written")
	m[packedKey] = packedEncoding.EncodeToString(buf)
}

// appendHex8 appends the 8 bytes s spells after prefix: 16 lowercase hex
// digits (the form hex.EncodeToString gives back).
func appendHex8(dst []byte, s, prefix string) ([]byte, bool) {
	if len(s) != len(prefix)+16 || s[:len(prefix)] != prefix {
		return dst, false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(s[len(prefix):])); err != nil || hex.EncodeToString(b[:]) != s[len(prefix):] {
		return dst, false
	}
	return append(dst, b[:]...), true
}

// unpacked reads a packed string into entries of size bytes, ids strictly
// increasing (as the map they stand for sorts them); false when it is not.
func unpacked(m map[string]any, size int) ([][]byte, bool) {
	s, ok := m[packedKey].(string)
	if !ok {
		return nil, false
	}
	raw, err := packedEncoding.DecodeString(s)
	if err != nil || len(raw) == 0 || len(raw)%size != 0 || packedEncoding.EncodeToString(raw) != s {
		return nil, false
	}
	out := slices.Collect(slices.Chunk(raw, size))
	for i := 1; i < len(out); i++ {
		if string(out[i][:8]) <= string(out[i-1][:8]) {
			return nil, false
		}
	}
	return out, true
}

// expandClaimed fills the attempts of a packed effect.batch_claimed back
// in; a packed string that does not read stays, and fails the decode as
// an unknown key.
func expandClaimed(m map[string]any) map[string]any {
	items, ok := unpacked(m, 8)
	attempt, okA := m[attemptKey].(int64)
	_, has := m["attempts"]
	if !ok || !okA || has {
		return m
	}
	attempts := make(map[string]any, len(items))
	for _, it := range items {
		attempts["fx"+hex.EncodeToString(it)] = attempt
	}
	delete(m, packedKey)
	delete(m, attemptKey)
	m["attempts"] = attempts
	return m
}

// expandApplied fills the written hashes of a packed
// effect.batch_applied back in, as expandClaimed.
func expandApplied(m map[string]any) map[string]any {
	items, ok := unpacked(m, 16)
	_, has := m["written"]
	if !ok || has {
		return m
	}
	written := make(map[string]any, len(items))
	for _, it := range items {
		written["fx"+hex.EncodeToString(it[:8])] = hex.EncodeToString(it[8:])
	}
	delete(m, packedKey)
	m["written"] = written
	return m
}

// batchV1 upcasts a schema-1 batch settlement: its keys are the same (a
// schema-2 record may store them packed, which reading fills back in).
func batchV1(m map[string]any) (map[string]any, error) { return m, nil }
