package hikoutei

import (
	"context"
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// openSegments is the segment store opts names for the store dir, and
// whether Open opened it (then Close closes it). Errors:
// ErrSegmentStoreUnavailable.
func openSegments(ctx context.Context, dir string, opts Options) (segstore.Store, bool, error) {
	if opts.SegmentStore != nil {
		return opts.SegmentStore, false, nil
	}
	if opts.Segments == "" {
		return nil, false, nil // the engine's default: DIR/segments
	}
	segs, err := segstore.Open(ctx, opts.Segments, dir)
	if err != nil {
		return nil, false, fmt.Errorf("segments %s: %w", segstore.Redact(opts.Segments), err)
	}
	return segs, true, nil
}

// closeSegments closes segs when own.
func closeSegments(segs segstore.Store, own bool) error {
	if !own || segs == nil {
		return nil
	}
	return segs.Close()
}

// SegmentsLocation is where the store's sealed segments live: the scheme
// ("dir" for a folder, else the URL's: s3, gs, azblob, mem…) and the
// folder or bucket and path, never the URL's credentials or query.
func (s *Store) SegmentsLocation() segstore.Location {
	return s.e.Log().SegmentStore().Location()
}

// segmentsHealth is the last failure to reach the segment store
// (ErrSegmentStoreUnavailable), nil once it answered again.
func (s *Store) segmentsHealth() error {
	err := s.e.Log().SegmentStoreErr()
	if err != nil && !errors.Is(err, ErrSegmentStoreUnavailable) {
		return nil
	}
	return err
}
