package events

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Record layout (version 1), the value stored under the 8-byte big-endian seq:
//
//	u8      format (1)
//	uvarint seq, version, schema, epoch
//	varint  at (Unix nanoseconds, UTC)
//	uvarint-length-prefixed: stream, type, token, commit, payload (canonical)
//	u64     xxhash64 of every preceding byte, little endian
//
// Record format 2 is format 1 with the fencing token, lowercase hex of
// even length (every lease token), stored as the bytes it spells: half
// its length. A token that is not (or no token) is stored in format 1.
//
// Record format 3 is a chained record: u8 3, the 32-byte chain link (the
// chain value of the record before it, see chain.go), then a whole
// format-1 or format-2 body (its own format byte first), then the u64
// xxhash64 of every preceding byte. Every record this build appends is of
// format 3; formats 1 and 2 decode as before.
//
// A record that is short, fails its checksum, or does not parse is reported as
// *CorruptRecordError naming its sequence; decoding never panics.
const (
	recordFormat            = 1
	recordFormatPackedToken = 2
	recordFormatChained     = 3
)

// linkLen is the length of a format-3 record's chain link.
const linkLen = 32

const checksumLen = 8

// encodeRecord returns the record bytes for e, whose Payload is already
// canonical-encoded in payload at the catalogue's current schema.
func encodeRecord(e *Event, payload []byte) []byte {
	h := header{Event: *e, typ: e.Type(), schema: schemaOf(e.Payload)}
	return encodeHeader(&h, payload)
}

// encodeHeader returns the record bytes of an envelope and its canonical
// payload: format 3 when h carries a link, else format 1 or 2.
func encodeHeader(h *header, payload []byte) []byte {
	n := 2 + linkLen + 5*binary.MaxVarintLen64 + len(h.Stream) + len(h.typ) + len(h.Token) + len(h.Commit) + len(payload) + 5*binary.MaxVarintLen64 + checksumLen
	b := make([]byte, 0, n)
	if !h.Link.IsZero() {
		b = append(b, recordFormatChained)
		b = append(b, h.Link[:]...)
	}
	format, token := recordFormat, h.Token
	if packed, ok := packToken(h.Token); ok {
		format, token = recordFormatPackedToken, packed
	}
	b = append(b, byte(format))
	b = binary.AppendUvarint(b, h.Seq)
	b = binary.AppendUvarint(b, h.Version)
	b = binary.AppendUvarint(b, uint64(h.schema))
	b = binary.AppendUvarint(b, h.Epoch)
	b = binary.AppendVarint(b, h.At.UnixNano())
	for _, s := range [...]string{h.Stream, string(h.typ), token, h.Commit} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(payload)))
	b = append(b, payload...)
	return binary.LittleEndian.AppendUint64(b, xxhash.Sum64(b))
}

// DecodeRecord parses a stored record into a typed event, upcast to its
// type's current schema. seq is the key it was stored under and is
// cross-checked against the record. Errors: *CorruptRecordError (wrapping
// ErrCorruptRecord) when the bytes are torn or not canonical;
// *PayloadError (ErrUnknownEventType, ErrMalformedPayload) when they are
// intact but not an event of this build's catalogue.
func DecodeRecord(seq uint64, b []byte) (Event, error) {
	return decodeRecord(seq, b, nil)
}

// decodeRecord is DecodeRecord sharing repeated strings through in (may be nil).
func decodeRecord(seq uint64, b []byte, in *interner) (Event, error) {
	if len(b) < 1+checksumLen {
		return Event{}, &CorruptRecordError{Seq: seq, Reason: "truncated"}
	}
	body := b[:len(b)-checksumLen]
	if binary.LittleEndian.Uint64(b[len(body):]) != xxhash.Sum64(body) {
		return Event{}, &CorruptRecordError{Seq: seq, Reason: "checksum mismatch"}
	}
	h, payload, err := parseRecord(body, in)
	if err != nil {
		return Event{}, &CorruptRecordError{Seq: seq, Reason: err.Error()}
	}
	if h.Seq != seq {
		return Event{}, &CorruptRecordError{Seq: seq, Reason: fmt.Sprintf("record claims seq %d", h.Seq)}
	}
	m, err := decodePayload(payload, in)
	if err != nil {
		return Event{}, &CorruptRecordError{Seq: seq, Reason: err.Error()}
	}
	if h.typ == TypeEntityPersisted && h.schema == persistedSchema {
		if p, ok := decodePersistedFast(h.Stream, h.Version, m); ok {
			h.Payload = p
			return h.Event, nil
		}
	}
	if h.Payload, err = decodeTyped(h.typ, h.schema, fromEnvelope(h.typ, h.schema, h.Stream, h.Version, m), true); err != nil {
		err.(*PayloadError).Seq = seq
		return Event{}, err
	}
	return h.Event, nil
}

// header is a parsed record before its payload is typed.
type header struct {
	Event
	typ    Type
	schema uint32
}

func decodePayload(b []byte, in *interner) (map[string]any, error) {
	v, err := decodeCanonical(b, in)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("payload is %T, not a map", v)
	}
	return m, nil
}

// recordReader walks a record body with bounds checks.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("field length %d past end", n)
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// packToken returns the bytes a lowercase hex token of even length spells.
func packToken(token string) (string, bool) {
	if token == "" || len(token)%2 != 0 || strings.ToLower(token) != token {
		return "", false
	}
	b, err := hex.DecodeString(token)
	return string(b), err == nil
}

// unpackToken is the token a format-2 record stores as packed.
func unpackToken(packed []byte, in *interner) (string, error) {
	if len(packed) == 0 {
		return "", fmt.Errorf("format %d without a token", recordFormatPackedToken)
	}
	var buf [64]byte
	return in.intern(hex.AppendEncode(buf[:0], packed)), nil
}

// parseRecord parses a record body (checksum cut off) into its header and
// raw canonical payload; a format-3 body's link is set in the header.
func parseRecord(body []byte, in *interner) (header, []byte, error) {
	if body[0] != recordFormatChained {
		return parseUnchained(body, in)
	}
	if len(body) < 2+linkLen {
		return header{}, nil, fmt.Errorf("format %d record without its link", recordFormatChained)
	}
	h, payload, err := parseUnchained(body[1+linkLen:], in)
	copy(h.Link[:], body[1:1+linkLen])
	if err == nil && h.Link == (ChainHash{}) {
		err = fmt.Errorf("format %d record with a zero link", recordFormatChained)
	}
	return h, payload, err
}

// parseUnchained parses a format-1 or format-2 body.
func parseUnchained(body []byte, in *interner) (header, []byte, error) {
	if body[0] != recordFormat && body[0] != recordFormatPackedToken {
		return header{}, nil, fmt.Errorf("unknown record format %d", body[0])
	}
	r := recordReader{b: body[1:]}
	var e header
	e.Seq, e.Version = r.uvarint(), r.uvarint()
	schema := r.uvarint()
	e.Epoch = r.uvarint()
	e.At = time.Unix(0, r.varint()).UTC()
	e.Stream, e.typ = string(r.bytes()), Type(in.intern(r.bytes()))
	token := r.bytes()
	e.Commit = string(r.bytes())
	payload := r.bytes()
	if body[0] == recordFormat {
		e.Token = in.intern(token)
	} else if r.err == nil {
		e.Token, r.err = unpackToken(token, in)
	}
	if r.err == nil && schema > 1<<31 {
		r.err = fmt.Errorf("schema %d out of range", schema)
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d trailing bytes", len(r.b))
	}
	e.schema = uint32(schema)
	return e, payload, r.err
}

// MarshalRecord returns the record bytes of a stamped event (Seq, Version,
// … set), checksum included, as this build writes it, so a mirror (e.g. a
// JetStream stream) can carry events that DecodeRecord verifies on the
// other side. For an event read from a log these are the bytes the log
// keeps, except a record stored at an older schema, which is re-encoded at
// its type's current schema (it was upcast on read). Errors: ErrInvalidEvent when the payload is
// not in the catalogue or has no canonical form.
func MarshalRecord(e Event) ([]byte, error) {
	payload, err := encodeEvent(nil, e.Stream, e.Version, &e)
	if err != nil {
		return nil, err
	}
	return encodeRecord(&e, payload), nil
}
