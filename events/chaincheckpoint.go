package events

import (
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// metaChainVerified is the meta key of the log's chain checkpoint
// (RecordChainCheckpoint).
var metaChainVerified = []byte("chain_verified")

// chainCheckpointVersion is the first byte of the stored checkpoint.
const chainCheckpointVersion = 1

// chainCheckpointLen is the stored checkpoint's length: the version, then
// seq, from and records (8 bytes each, big-endian), then the hash.
const chainCheckpointLen = 1 + 3*8 + len(ChainHash{})

// ChainCheckpoint is a verified point of the hash chain: a complete walk
// of the chain (from the genesis value, or from an earlier checkpoint)
// found every record up to Seq intact, and c(Seq) = Hash. It is kept in
// log.db's meta bucket, written in the same kind of transaction as the
// records, and trusted only while the log vouches for it: the record at
// Seq is still there, passes its checksum, carries a link, and the chain
// value after it is Hash (see CheckedChainCheckpoint). A walk that starts
// from it (ChainVerifyOptions.FromCheckpoint) checks only what was
// appended after Seq; a change to a record at or before it is found only
// by a walk from the genesis value (VerifyChain without FromCheckpoint,
// doctor).
type ChainCheckpoint struct {
	Seq  uint64    // the last chained record the walk verified
	Hash ChainHash // c(Seq)
	// From is the checkpoint the walk that recorded this one started
	// after (0: the genesis value).
	From    uint64
	Records uint64 // records that walk read
}

func (p ChainCheckpoint) encode() []byte {
	b := make([]byte, 0, chainCheckpointLen)
	b = append(b, chainCheckpointVersion)
	b = binary.BigEndian.AppendUint64(b, p.Seq)
	b = binary.BigEndian.AppendUint64(b, p.From)
	b = binary.BigEndian.AppendUint64(b, p.Records)
	return append(b, p.Hash[:]...)
}

func decodeChainCheckpoint(b []byte) (ChainCheckpoint, error) {
	if len(b) != chainCheckpointLen || b[0] != chainCheckpointVersion {
		return ChainCheckpoint{}, fmt.Errorf("a value of %d bytes that is not a checkpoint this build reads", len(b))
	}
	p := ChainCheckpoint{Seq: binary.BigEndian.Uint64(b[1:]), From: binary.BigEndian.Uint64(b[9:]),
		Records: binary.BigEndian.Uint64(b[17:])}
	copy(p.Hash[:], b[25:])
	return p, nil
}

// CheckedChainCheckpoint returns the log's chain checkpoint when the log
// vouches for it. ok is false when there is none (a log no walk has
// completed on since this build, or a new one) or when the log does not
// vouch for it; then distrust says why (empty when there is none).
// Errors: ErrLogClosed; the log's damage.
func (l *Log) CheckedChainCheckpoint() (p ChainCheckpoint, ok bool, distrust string, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		p, ok, distrust = checkedCheckpoint(tx)
		return nil
	})
	return p, ok, distrust, err
}

// checkedCheckpoint reads the checkpoint in tx and checks it against the
// record at its sequence (see CheckedChainCheckpoint).
func checkedCheckpoint(tx *bolt.Tx) (ChainCheckpoint, bool, string) {
	meta := tx.Bucket(bucketMeta)
	v := meta.Get(metaChainVerified)
	if v == nil {
		return ChainCheckpoint{}, false, ""
	}
	p, err := decodeChainCheckpoint(v)
	if err != nil {
		return p, false, err.Error()
	}
	if reason := vouch(tx, p); reason != "" {
		return p, false, fmt.Sprintf("checkpoint at seq %d: %s", p.Seq, reason)
	}
	return p, true, ""
}

// vouch is why the log does not vouch for p ("" when it does).
func vouch(tx *bolt.Tx, p ChainCheckpoint) string {
	if p.Seq == 0 || p.Seq > getU64(tx.Bucket(bucketMeta), metaHead) {
		return "past the log's head (an older log.db, or a stale checkpoint)"
	}
	v := tx.Bucket(bucketEvents).Get(u64(p.Seq))
	if v == nil {
		return "the log has no record there"
	}
	r, err := parseRaw(p.Seq, v)
	switch {
	case err != nil:
		return "the record there is damaged"
	case r.h.Link.IsZero():
		return "the record there carries no link"
	case r.chainValue(r.h.Link) != p.Hash:
		return "the chain value there is not the checkpoint's hash (a rewritten log, or a changed checkpoint)"
	}
	return ""
}

// RecordChainCheckpoint records where the complete walk rep ended as the
// log's chain checkpoint: the last chained record it verified. Nothing is
// recorded for a walk that did not complete (it failed, or was not
// VerifyChain's), that verified no chained record, or whose point is not
// after the checkpoint the log already vouches for; nor when the log no
// longer vouches for the new point (the record changed meanwhile). It
// reports whether it recorded. Errors: ErrLogClosed; the log's damage;
// bbolt's error for a log opened read-only.
func (l *Log) RecordChainCheckpoint(rep *ChainReport) (bool, error) {
	if rep == nil || !rep.complete || rep.checkpoint.Seq == 0 {
		return false, nil
	}
	p := rep.checkpoint
	recorded := false
	err := l.update(func(tx *bolt.Tx) error {
		if cur, ok, _ := checkedCheckpoint(tx); ok && cur.Seq >= p.Seq {
			return nil
		}
		if vouch(tx, p) != "" {
			return nil
		}
		recorded = true
		return tx.Bucket(bucketMeta).Put(metaChainVerified, p.encode())
	})
	return recorded, err
}
