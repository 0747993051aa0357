package events

import (
	"context"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// errReplicaHeld: applyReplica found the replica commit already in the
// log (a replay): nothing is written.
var errReplicaHeld = errors.New("replica commit already held")

// replicaSeal is one segment.sealed event of a replica commit, prepared
// before the commit's transaction: its segment built from this log's own
// records, checked against the event and stored.
type replicaSeal struct {
	seg  SegmentSealed
	plan *sealPlan
}

// replicaSealing are the seals of one replica commit (usually none).
type replicaSealing []replicaSeal

// replicaSeals prepares the seals a replica commit carries: a standby
// (or a primary catching up after a crash between the stream's
// acknowledgement and its own commit) seals the range the primary
// sealed. It builds the segment from its own records, in replica form,
// and requires it to be the one the event vouches for (range, chain
// values, record counts, the file's size and digest: zstd at the same
// settings is deterministic); then stores it, unless the segment store
// already holds that very file (an object store both hosts share, or an
// earlier attempt), and reads it back: upload before delete. Errors:
// *SegmentError (ErrReplicaSegmentMismatch, the errors of a seal's
// write and read back); the errors of planning a seal.
func (l *Log) replicaSeals(replica uint64, records [][]byte) (replicaSealing, error) {
	var out replicaSealing
	for _, rec := range records {
		seg, ok, err := sealedPayload(rec)
		if !ok || err != nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if held, err := l.ReplicaHead(); err != nil || replica <= held {
			return nil, err
		}
		p, err := l.prepareReplicaSeal(seg)
		if err != nil {
			return nil, err
		}
		out = append(out, replicaSeal{seg: seg, plan: p})
	}
	return out, nil
}

// sealedPayload decodes rec when it is a segment.sealed event.
func sealedPayload(rec []byte) (SegmentSealed, bool, error) {
	r, err := parseRaw(0, rec)
	if err != nil || r.h.Stream != SegmentStream {
		return SegmentSealed{}, false, err
	}
	e, err := DecodeRecord(r.h.Seq, rec)
	if err != nil {
		return SegmentSealed{}, false, err
	}
	seg, ok := e.Payload.(SegmentSealed)
	return seg, ok, nil
}

// prepareReplicaSeal plans seg's range on this log, checks the plan and
// its file against seg, and stores the file.
func (l *Log) prepareReplicaSeal(seg SegmentSealed) (*sealPlan, error) {
	p, err := l.planSeal(seg.Last + 1)
	if err != nil {
		return nil, fmt.Errorf("apply the seal of %s: %w", seg.Name, err)
	}
	if err := p.fileForm(true); err != nil {
		return nil, err
	}
	if err := p.matches(seg); err != nil {
		return nil, err
	}
	file, err := encodeSegment(l.storeID, p.file)
	if err != nil {
		return nil, err
	}
	if int64(len(file)) != seg.Size || fileDigest(file) != seg.Digest {
		return nil, mismatch(seg, fmt.Sprintf("this host's file is %d bytes, %s; the seal vouches for %d bytes, %s",
			len(file), fileDigest(file), seg.Size, seg.Digest))
	}
	if err := l.storeReplicaSegment(seg, file); err != nil {
		return nil, err
	}
	return p, l.checkWritten(seg, p)
}

// matches checks that the plan covers what seg says the primary sealed.
func (p *sealPlan) matches(seg SegmentSealed) error {
	got := p.segment()
	if got.Name != seg.Name || got.First != seg.First || got.Last != seg.Last || got.FirstLink != seg.FirstLink ||
		got.LastHash != seg.LastHash || got.Records != seg.Records || got.Kept != seg.Kept {
		return mismatch(seg, fmt.Sprintf("this host's records make %s (%d sealed, %d kept)", got.Name, got.Records, got.Kept))
	}
	return nil
}

func mismatch(seg SegmentSealed, reason string) error {
	return &SegmentError{Err: ErrReplicaSegmentMismatch, Name: seg.Name, Reason: reason}
}

// storeReplicaSegment puts file as seg unless the store holds it already
// (the digest the seal vouches for).
func (l *Log) storeReplicaSegment(seg SegmentSealed, file []byte) error {
	there, err := l.segmentStored(seg.Name)
	if err != nil {
		return fmt.Errorf("seal %s: %w", seg.Name, err)
	}
	if there {
		if _, err := readVouched(l.segs, seg); err == nil {
			return nil
		}
	}
	err = l.segs.Put(context.Background(), seg.Name, file)
	l.noteSegments(err)
	if err != nil {
		return fmt.Errorf("write segment %s: %w", seg.Name, err)
	}
	return nil
}

// remove removes the sealed records of each seal and records it in the
// manifest, in the replica commit's transaction.
func (s replicaSealing) remove(tx *bolt.Tx) error {
	for _, r := range s {
		if err := r.plan.remove(tx, r.seg); err != nil {
			return err
		}
	}
	return nil
}
