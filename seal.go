package hikoutei

import (
	"context"
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/retention"
)

// SealOptions says which records Seal moves out of log.db: the ones with
// seq < Below, or all but the newest Keep (one of the two). A Below past
// the log's head (math.MaxUint64) seals every record Seal may, as
// `hikoutei seal --keep 0` does.
type SealOptions struct {
	Below uint64
	Keep  uint64
	// MinBatch is the fewest records the seal moves, with either of
	// Below and Keep: 0 is DefaultRetentionMinBatch, as in
	// Retention.MinBatch (one meaning of zero, one decision: the
	// background seal decides with the same rule); 1 moves any number.
	// When fewer lie between the first record no segment holds and the
	// seal point, Seal seals nothing and reports Skipped: a seal run again
	// soon after the last one then writes no segment of the few records
	// committed since (`hikoutei seal --keep N` passes --min-batch,
	// DefaultRetentionMinBatch unless given; `--below SEQ` passes 1).
	MinBatch uint64
}

// SealReport is what Seal did: the segment it wrote (its file name, the
// sequences it covers, the records it holds, the records of that range
// that stayed in log.db, its size) and the segment.sealed event that
// vouches for it.
type SealReport struct {
	Segment     string
	First, Last uint64
	Records     uint64
	Kept        uint64
	Size        int64
	Path        string
	Seq         uint64 // the segment.sealed event
	// Replaced is true when a file of the same name that no seal vouched
	// for (a seal that did not commit) was replaced.
	Replaced bool
	// Skipped is true when the seal moved nothing because fewer than
	// MinBatch records may go: First..Last are those (Last < First:
	// none), and Segment is empty.
	Skipped bool
	// MinBatch is the minimum the seal applied: SealOptions.MinBatch, or
	// DefaultRetentionMinBatch for 0.
	MinBatch uint64
}

// Seal moves the log's older records out of log.db into a sealed segment
// file in the store's segments folder: compressed, written and read back
// before the log vouches for it with a segment.sealed event, committed in
// the transaction that removes the records (docs/operations.md, "Sealing
// old records"). Reads of old events (Replay, AsOf, subscriptions, the
// audit) read through the segments; opening the store never does. Records
// the read model has not applied, and the records of the streams a store
// reads when it opens, stay in log.db. A replicated primary's seal reaches
// its standbys through the stream, which then drops what every host
// sealed (docs/replication.md, "Retention"). Fewer records to move than
// opts.MinBatch (by default DefaultRetentionMinBatch) is no error: the
// report says Skipped and nothing is written. Errors: ErrSealRefused
// (nothing to seal with a MinBatch of 1, both or neither of Below and
// Keep, a standby);
// ErrChainBroken when the records to seal do not continue the chain;
// ErrSegmentDamaged when the file read back differs; ErrStoreClosed;
// ErrStaleWriterFence; I/O errors. ErrReadModelBehind comes with the
// report: the seal committed, but read.sqlite could not record it (a full
// disk); nothing is lost, the store catches the read model up before its
// next commit and at its next open.
func (s *Store) Seal(ctx context.Context, opts SealOptions) (SealReport, error) {
	if err := ctx.Err(); err != nil {
		return SealReport{}, err
	}
	below, err := s.sealBelow(opts)
	if err != nil {
		return SealReport{}, err
	}
	batch := retention.MinBatch(opts.MinBatch)
	if batch > 1 { // with 1, nothing to move is the engine's seal_refused
		first, last, err := s.sealSpan(below)
		if err != nil || !retention.Enough(first, last, batch) {
			return SealReport{Skipped: true, First: first, Last: last, MinBatch: batch}, err
		}
	}
	rep, err := s.e.Seal(below)
	if err != nil && !errors.Is(err, ErrReadModelBehind) {
		return SealReport{}, err
	}
	g := rep.Segment
	return SealReport{Segment: g.Name, First: g.First, Last: g.Last, Records: g.Records, Kept: g.Kept, Size: g.Size,
		Path: rep.Path, Seq: rep.Event.Seq, Replaced: rep.Replaced, MinBatch: batch}, err
}

// sealBelow is the first sequence opts keeps in log.db.
func (s *Store) sealBelow(opts SealOptions) (uint64, error) {
	if (opts.Below == 0) == (opts.Keep == 0) {
		return 0, fmt.Errorf("%w: give one of Below and Keep", ErrSealRefused)
	}
	if opts.Below > 0 {
		return opts.Below, nil
	}
	head, err := s.e.Log().Head()
	if err != nil || head < opts.Keep {
		return 1, err
	}
	return head - opts.Keep + 1, nil
}

// sealSpan is the records a seal below below would move: from the first
// record no segment holds through below-1, bounded by the log's head and
// the read model's checkpoint as the engine bounds the seal.
func (s *Store) sealSpan(below uint64) (first, last uint64, err error) {
	st, err := s.e.SealState()
	if err != nil {
		return 0, 0, err
	}
	return st.Unsealed, min(max(below, 1)-1, st.Head, st.Applied), nil
}

// Segments lists the store's sealed segments, oldest first, as the log's
// manifest records them (it reads log.db only). Errors: ErrStoreClosed.
func (s *Store) Segments() ([]events.SegmentSealed, error) {
	return s.e.Log().Segments()
}
