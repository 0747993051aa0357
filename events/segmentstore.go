package events

import (
	"context"
	"errors"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// SegmentStore is where the log's sealed segments live (Options.Segments,
// or the folder SegmentsDir beside log.db).
func (l *Log) SegmentStore() segstore.Store { return l.segs }

// SegmentStoreErr is the last failure to reach the segment store, a
// *SegmentError or an error wrapping ErrSegmentStoreUnavailable; nil when
// none happened or an operation succeeded since. It never reaches the
// store itself.
func (l *Log) SegmentStoreErr() error {
	if p := l.segErr.Load(); p != nil {
		return *p
	}
	return nil
}

// noteSegments records the outcome of an operation on the segment store:
// an ErrSegmentStoreUnavailable is kept for SegmentStoreErr, anything
// else clears it (the store answered).
func (l *Log) noteSegments(err error) {
	if errors.Is(err, ErrSegmentStoreUnavailable) {
		l.segErr.Store(&err)
		return
	}
	l.segErr.Store(nil)
}

// loadSegment reads and checks the segment s from the log's store.
// Errors: *SegmentError.
func (l *Log) loadSegment(s SegmentSealed) (segRecords, error) {
	recs, err := loadSegment(l.segs, l.storeID, s)
	l.noteSegments(err)
	l.segReads.loaded.Add(1)
	return recs, err
}

// segmentStored stats the segment name in the log's store: whether it is
// there. Errors: ErrSegmentStoreUnavailable.
func (l *Log) segmentStored(name string) (bool, error) {
	_, err := l.segs.Stat(context.Background(), name)
	if errors.Is(err, segstore.ErrNotFound) {
		err = nil
		l.noteSegments(nil)
		return false, nil
	}
	l.noteSegments(err)
	return err == nil, err
}
