package replication

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"
)

// commitFormat is the first byte of an encoded commit.
const commitFormat byte = 1

// Commit is one commit read from the stream: its stream sequence (the
// commit number), its records in order, and when the stream stored it.
type Commit struct {
	Seq     uint64
	Records [][]byte
	Stored  time.Time
}

// EncodeCommit frames records as one message body: the format byte, the
// record count, then each record as length and bytes (unsigned varints).
// An empty record list is a valid commit.
func EncodeCommit(records [][]byte) []byte {
	n := 1 + binary.MaxVarintLen64
	for _, r := range records {
		n += binary.MaxVarintLen64 + len(r)
	}
	out := make([]byte, 0, n)
	out = append(out, commitFormat)
	out = binary.AppendUvarint(out, uint64(len(records)))
	for _, r := range records {
		out = binary.AppendUvarint(out, uint64(len(r)))
		out = append(out, r...)
	}
	return out
}

// DecodeCommit is the inverse of EncodeCommit. The records alias body.
// Errors: ErrCorruptCommit.
func DecodeCommit(body []byte) ([][]byte, error) {
	if len(body) == 0 || body[0] != commitFormat {
		return nil, fmt.Errorf("%w: unknown format", ErrCorruptCommit)
	}
	rest := body[1:]
	count, k := binary.Uvarint(rest)
	if k <= 0 || count > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: bad record count", ErrCorruptCommit)
	}
	rest = rest[k:]
	recs := make([][]byte, 0, count)
	for i := uint64(0); i < count; i++ {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > uint64(len(rest)-k) {
			return nil, fmt.Errorf("%w: record %d of %d truncated", ErrCorruptCommit, i+1, count)
		}
		recs = append(recs, rest[k:k+int(n)])
		rest = rest[k+int(n):]
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCorruptCommit, len(rest))
	}
	return recs, nil
}

// MsgID is a commit's idempotency key (Nats-Msg-Id): the stream position
// it claims and the SHA-256 of its body. A retry of the same commit at
// the same position has the same key; anything else has another.
func MsgID(position uint64, body []byte) string {
	sum := sha256.Sum256(body)
	return strconv.FormatUint(position, 10) + "-" + hex.EncodeToString(sum[:16])
}
