package events

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/cespare/xxhash/v2"
)

// ChainHash is a value of the log's hash chain: SHA-256 (32 bytes).
//
// The chain runs over every record of a log in sequence order:
//
//	c(0) = Genesis(store id)
//	c(n) = SHA-256( c(n-1) ‖ chain form of record n )
//
// and every record of format 3 carries c(n-1), its link. The chain form
// of a record is its envelope and payload bytes exactly as stored, without
// the format byte, the link, the checksum and the fencing token field
// (the token never leaves the store: a standby and a mirror hold the
// record without it, and their chain is the primary's): uvarint seq,
// version, schema, epoch; varint at (Unix ns); then stream, type, commit
// and the canonical payload, each uvarint-length-prefixed. The head hash
// c(head) commits to the whole log: changing, removing or reordering any
// record changes it, and breaks the link of every later record.
type ChainHash [sha256.Size]byte

// String is the lowercase hex form (64 digits).
func (h ChainHash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero value (no link).
func (h ChainHash) IsZero() bool { return h == ChainHash{} }

// ParseChainHash parses the 64-digit hex form of a chain value.
// Errors: a plain error when s is not 64 hex digits.
func ParseChainHash(s string) (ChainHash, error) {
	var h ChainHash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("chain hash %q: want %d hex digits", s, 2*len(h))
	}
	copy(h[:], b)
	return h, nil
}

// genesisContext prefixes the genesis input, so no other SHA-256 of a
// store id is mistaken for it.
const genesisContext = "hikoutei-chain-v1\n"

// Genesis is c(0), the chain value before a log's first record: the
// SHA-256 of "hikoutei-chain-v1\n" followed by the store id.
func Genesis(storeID string) ChainHash {
	return sha256.Sum256([]byte(genesisContext + storeID))
}

// chainBufs holds the buffers chain values are computed in.
var chainBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// chainNext is SHA-256(prev ‖ chain form) of a record whose format-1 or
// format-2 body, after its format byte and without the checksum, is
// inner: inner without its token field (the fourth length-prefixed field).
// Errors: inner does not parse.
func chainNext(prev ChainHash, inner []byte) (ChainHash, error) {
	ts, te, err := tokenSpan(inner)
	if err != nil {
		return ChainHash{}, err
	}
	bp := chainBufs.Get().(*[]byte)
	b := append(append(append((*bp)[:0], prev[:]...), inner[:ts]...), inner[te:]...)
	h := ChainHash(sha256.Sum256(b))
	if cap(b) <= maxPooledEncodeBuf {
		*bp = b[:0]
		chainBufs.Put(bp)
	}
	return h, nil
}

// tokenSpan is where the token field (its length prefix included) lies in
// a record body after its format byte: after four uvarints, the time's
// varint, and the stream and type fields.
func tokenSpan(inner []byte) (int, int, error) {
	r := recordReader{b: inner}
	for range 4 {
		r.uvarint()
	}
	r.varint()
	r.bytes()
	r.bytes()
	ts := len(inner) - len(r.b)
	r.bytes()
	if r.err != nil {
		return 0, 0, r.err
	}
	return ts, len(inner) - len(r.b), nil
}

// chainRecord is a record whose checksum and envelope were checked, not
// its payload's type.
type chainRecord struct {
	h       header
	payload []byte // the canonical payload as stored
	inner   []byte // the format-1 or -2 body after its format byte, without the checksum
}

// parseRaw checks a stored record's checksum and parses its envelope;
// seq, when not 0, must be the sequence the record claims. Errors:
// *CorruptRecordError naming seq.
func parseRaw(seq uint64, b []byte) (chainRecord, error) {
	if len(b) < 1+checksumLen {
		return chainRecord{}, &CorruptRecordError{Seq: seq, Reason: "truncated"}
	}
	body := b[:len(b)-checksumLen]
	if binary.LittleEndian.Uint64(b[len(body):]) != xxhash.Sum64(body) {
		return chainRecord{}, &CorruptRecordError{Seq: seq, Reason: "checksum mismatch"}
	}
	h, payload, err := parseRecord(body, nil)
	switch {
	case err != nil:
		return chainRecord{}, &CorruptRecordError{Seq: seq, Reason: err.Error()}
	case seq != 0 && h.Seq != seq:
		return chainRecord{}, &CorruptRecordError{Seq: seq, Reason: fmt.Sprintf("record claims seq %d", h.Seq)}
	}
	if body[0] == recordFormatChained {
		body = body[1+linkLen:]
	}
	return chainRecord{h: h, payload: payload, inner: body[1:]}, nil
}

// chainValue is c(seq) of a parsed record: the chain value after it,
// given the value before it.
func (r *chainRecord) chainValue(prev ChainHash) ChainHash {
	h, _ := chainNext(prev, r.inner) // parseRaw parsed inner
	return h
}

// ChainNext returns the chain value after record rec (its stored or
// mirrored bytes, checksum included) given the value before it, prev;
// for a format-3 record it also checks that rec's link is prev. An
// auditor verifying a mirror stream calls it for each record in order,
// from the previous record's value (see docs/events.md). Errors:
// *CorruptRecordError (ErrCorruptRecord) when rec is torn; *ChainBrokenError
// (ErrChainBroken) when its link is not prev.
func ChainNext(prev ChainHash, rec []byte) (ChainHash, error) {
	r, err := parseRaw(0, rec)
	if err != nil {
		return ChainHash{}, err
	}
	if !r.h.Link.IsZero() && r.h.Link != prev {
		return ChainHash{}, &ChainBrokenError{Seq: r.h.Seq, Reason: "its link is not the chain value of the record before it"}
	}
	return r.chainValue(prev), nil
}

// RecordChainValue returns c(seq) of a format-3 record from the record
// alone (its link and its chain form); ok is false for a record written
// before the chain. Errors: *CorruptRecordError when rec is torn.
func RecordChainValue(rec []byte) (h ChainHash, ok bool, err error) {
	r, err := parseRaw(0, rec)
	if err != nil || r.h.Link.IsZero() {
		return ChainHash{}, false, err
	}
	return r.chainValue(r.h.Link), true, nil
}

// ChainPin is a chain value a third party recorded: c(Seq) = Hash.
type ChainPin struct {
	Seq  uint64
	Hash ChainHash
}

// String is the SEQ:HASH form ParseChainPin reads.
func (p ChainPin) String() string { return fmt.Sprintf("%d:%s", p.Seq, p.Hash) }
