package hikoutei

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// Segment presence check: Health lists the segment store's names (never
// their contents) at most every segmentCheckEvery of the store's clock,
// each list bounded by segmentListTimeout, and compares them with the
// manifest.
const (
	segmentCheckEvery  = time.Minute
	segmentListTimeout = 5 * time.Second
)

// segPresence is the last comparison of the manifest with the segment
// store's list: the vouched segments absent from it and the stored names
// the manifest does not vouch for (strays). Safe for concurrent use.
type segPresence struct {
	mu      sync.Mutex
	checked bool
	at      time.Time
	vouched int
	missing []string
	strays  int
}

// SegmentPresence is the last comparison of the log's manifest with the
// names the segment store lists (docs/operations.md "Sealed segments
// that went missing"): Vouched segments the manifest records, Missing the
// names of those the store does not list, Strays the names it lists that
// the manifest does not vouch for. Checked is false before any list
// answered.
type SegmentPresence struct {
	Checked bool
	At      time.Time
	Vouched int
	Missing []string
	Strays  int
}

// CheckSegments lists the segment store now (names only, never the
// contents) and compares it with the manifest; Health does the same at
// most once a minute of the store's clock. Errors: ErrStoreClosed,
// ErrSegmentStoreUnavailable, the context's.
func (s *Store) CheckSegments(ctx context.Context) (SegmentPresence, error) {
	segs, err := s.e.Log().Segments()
	if err != nil {
		return SegmentPresence{}, err
	}
	store := s.e.Log().SegmentStore()
	if store == nil {
		return SegmentPresence{}, ErrStoreClosed
	}
	listed, err := store.List(ctx)
	if err != nil {
		return SegmentPresence{}, fmt.Errorf("list segments: %w", err)
	}
	return s.recordPresence(segs, listed), nil
}

// recordPresence compares segs with listed, stamps it with the store's
// clock and keeps it for Health.
func (s *Store) recordPresence(segs []events.SegmentSealed, listed []segstore.Info) SegmentPresence {
	p := comparePresence(segs, listed)
	p.At = s.e.Now()
	s.segp.set(p)
	return p
}

// uploadLitter matches the temporary file a gocloud fileblob bucket
// (no_tmp_dir) writes a segment's upload to, NAME.<unix nanoseconds in
// hex>.tmp, NAME a segment name: left behind when the process is killed
// during the upload.
var uploadLitter = regexp.MustCompile(`^[0-9]{20}-[0-9]{20}-[0-9a-f]{16}-[0-9a-f]{16}\.seg\.zst\.([0-9a-f]{1,16})\.tmp$`)

// litterAge is how old an upload's temporary file must be before Open
// removes it: one younger may be another process's upload in progress.
const litterAge = time.Hour

// removeUploadLitter deletes from store the listed upload leftovers
// (uploadLitter) older than litterAge at now; none of them can be a
// name the manifest vouches for (those end in .seg.zst). It returns the
// names it removed; a failed delete is left for the next Open.
func removeUploadLitter(ctx context.Context, store segstore.Store, listed []segstore.Info, now time.Time) []string {
	var gone []string
	for _, i := range listed {
		m := uploadLitter.FindStringSubmatch(i.Name)
		if m == nil {
			continue
		}
		ns, err := strconv.ParseInt(m[1], 16, 64)
		if err != nil || now.Sub(time.Unix(0, ns)) < litterAge {
			continue
		}
		if store.Delete(ctx, i.Name) == nil {
			gone = append(gone, i.Name)
		}
	}
	return gone
}

// openCheck lists the segment store once, removes old upload litter
// from it, and compares the rest with the manifest (at Open; failures
// are left to Health).
func (s *Store) openCheck() {
	store := s.e.Log().SegmentStore()
	if store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), segmentListTimeout)
	defer cancel()
	listed, err := store.List(ctx)
	if err != nil {
		return
	}
	gone := removeUploadLitter(ctx, store, listed, s.e.Now())
	segs, err := s.e.Log().Segments()
	if err != nil {
		return
	}
	s.recordPresence(segs, withoutNames(listed, gone))
}

// withoutNames is listed less the entries named in gone.
func withoutNames(listed []segstore.Info, gone []string) []segstore.Info {
	if len(gone) == 0 {
		return listed
	}
	drop := make(map[string]bool, len(gone))
	for _, n := range gone {
		drop[n] = true
	}
	kept := make([]segstore.Info, 0, len(listed))
	for _, i := range listed {
		if !drop[i.Name] {
			kept = append(kept, i)
		}
	}
	return kept
}

// comparePresence is the presence of the vouched segs among listed.
func comparePresence(segs []events.SegmentSealed, listed []segstore.Info) SegmentPresence {
	missing, strays := events.CompareSegments(segs, listed)
	return SegmentPresence{Checked: true, Vouched: len(segs), Missing: missing, Strays: strays}
}

// set records p.
func (sp *segPresence) set(p SegmentPresence) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.checked, sp.at, sp.vouched, sp.missing, sp.strays = true, p.At, p.Vouched, p.Missing, p.Strays
}

// get is the last presence recorded.
func (sp *segPresence) get() SegmentPresence {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return SegmentPresence{Checked: sp.checked, At: sp.at, Vouched: sp.vouched,
		Missing: append([]string(nil), sp.missing...), Strays: sp.strays}
}

// due is true when no check ran or the last is segmentCheckEvery old.
func (sp *segPresence) due(now time.Time) bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return !sp.checked || now.Sub(sp.at) >= segmentCheckEvery || now.Before(sp.at)
}

// SegmentsPresence is the last CheckSegments result (Checked false
// before one answered); it never reaches the segment store.
func (s *Store) SegmentsPresence() SegmentPresence {
	return s.segp.get()
}

// segmentsMissing checks presence when due and returns segment_missing
// (a *SegmentError naming the first absent file and counting the rest)
// while a vouched segment is absent; nil otherwise or while the store
// does not answer the list.
func (s *Store) segmentsMissing() error {
	if s.segp.due(s.e.Now()) {
		ctx, cancel := context.WithTimeout(context.Background(), segmentListTimeout)
		_, _ = s.CheckSegments(ctx) // a failed list keeps the last result
		cancel()
	}
	p := s.segp.get()
	if len(p.Missing) == 0 {
		return nil
	}
	return &events.SegmentError{Err: ErrSegmentMissing, Name: p.Missing[0],
		Reason: fmt.Sprintf("%d of %d vouched segments not listed in %s", len(p.Missing), p.Vouched,
			s.e.Log().SegmentStore().Location())}
}
