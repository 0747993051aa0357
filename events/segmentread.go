package events

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// metaSegments is the meta key of the manifest of sealed segments an
// earlier build wrote: the payloads of its segment.sealed events, oldest
// first (JSON), rewritten whole by each seal. From log format 5 each seal
// adds an entry to bucketManifest instead (manifest.go); readers read
// both. Either is written in the transaction that appends the seal's
// event and removes the records it sealed, so that readers find the
// segments without reading the events.
var metaSegments = []byte("segments")

// sealedBelow is the first sequence after the last sealed segment (1:
// nothing sealed).
func sealedBelow(segs []SegmentSealed) uint64 {
	if len(segs) == 0 {
		return 1
	}
	return segs[len(segs)-1].Last + 1
}

// Segments returns the log's sealed segments, oldest first: what its
// segment.sealed events recorded. It reads log.db's meta only.
// Errors: ErrLogClosed; *LogCorruptError.
func (l *Log) Segments() ([]SegmentSealed, error) {
	segs, err := l.segments()
	return slices.Clone(segs), err
}

// CompareSegments compares a manifest, segs, with the names a segment
// store lists (its List): missing names the segments of segs that listed
// lacks, in the manifest's order, and strays counts the listed names segs
// does not vouch for (the leftovers of seals that did not commit, other
// files). The store's health and `hikoutei status` both judge by it.
func CompareSegments(segs []SegmentSealed, listed []segstore.Info) (missing []string, strays int) {
	have := make(map[string]bool, len(listed))
	for _, i := range listed {
		have[i.Name] = true
	}
	strays = len(listed)
	for _, g := range segs {
		if have[g.Name] {
			strays--
			continue
		}
		missing = append(missing, g.Name)
	}
	return missing, strays
}

// segments is the manifest, parsed once per change: shared, read only.
func (l *Log) segments() ([]SegmentSealed, error) {
	var segs []SegmentSealed
	err := l.view(func(tx *bolt.Tx) (err error) {
		segs, err = l.manifestIn(tx)
		return err
	})
	return segs, err
}

// manifestCache is a parsed manifest and the meta bucket's sequence it
// was read at: every transaction that changes the manifest raises the
// sequence (bumpManifest), so one sequence names one manifest among the
// committed ones.
type manifestCache struct {
	key  uint64
	segs []SegmentSealed
}

// manifestIn reads the manifest in tx, parsing it only when it changed
// since the last read-only transaction that parsed it: readers share the
// slice returned and must not change it (appending copies: it is
// clipped). A write transaction parses it afresh (it may roll back).
func (l *Log) manifestIn(tx *bolt.Tx) ([]SegmentSealed, error) {
	meta := tx.Bucket(bucketMeta)
	key := meta.Sequence()
	if c := l.manifest.Load(); c != nil && c.key == key && !tx.Writable() {
		return c.segs, nil
	}
	segs, err := sealedSegments(tx)
	if err != nil || tx.Writable() {
		return segs, err
	}
	segs = slices.Clip(segs)
	l.manifest.Store(&manifestCache{key: key, segs: segs})
	return segs, nil
}

// bumpManifest marks a change of the manifest in tx (see manifestCache).
func bumpManifest(meta *bolt.Bucket) error {
	return meta.SetSequence(meta.Sequence() + 1)
}

// StraySegments lists what the segment store holds that no
// segment.sealed event vouches for (a seal that did not commit; a
// folder's temporary file): readers ignore them; the next seal that
// commits from the same record removes them, the next writer a folder's
// temporary files. Errors: ErrLogClosed;
// ErrSegmentStoreUnavailable.
func (l *Log) StraySegments() ([]string, error) {
	segs, err := l.Segments()
	if err != nil {
		return nil, err
	}
	vouched := map[string]bool{}
	for _, s := range segs {
		vouched[s.Name] = true
	}
	stored, err := l.segs.List(context.Background())
	l.noteSegments(err)
	if err != nil {
		return nil, err
	}
	var stray []string
	for _, s := range stored {
		if !vouched[s.Name] {
			stray = append(stray, s.Name)
		}
	}
	return stray, nil
}

// logRange copies the records of log.db with first <= seq <= last.
func (l *Log) logRange(first, last uint64) (segRecords, error) {
	var out segRecords
	err := l.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketEvents).Cursor()
		for k, v := c.Seek(u64(first)); len(k) == 8 && binary.BigEndian.Uint64(k) <= last; k, v = c.Next() {
			out = append(out, segRecord{seq: binary.BigEndian.Uint64(k), raw: append([]byte(nil), v...)})
		}
		return nil
	})
	return out, err
}

// sealedRecords are the records s covers in sequence order: the segment's,
// merged with the ones its seal kept in log.db. Errors: *SegmentError.
func (l *Log) sealedRecords(s SegmentSealed) (segRecords, error) {
	recs, err := l.loadSegment(s)
	if err != nil {
		return nil, err
	}
	kept, err := l.logRange(s.First, s.Last)
	if err != nil {
		return nil, err
	}
	if uint64(len(kept)) != s.Kept {
		return nil, &SegmentError{Err: ErrSegmentDamaged, Name: s.Name,
			Reason: fmt.Sprintf("log.db holds %d records of its range, its seal kept %d", len(kept), s.Kept)}
	}
	return mergeRecords(recs, kept), nil
}

// readSealed delivers the sealed events with seq >= from to fn, in order
// (see ReadFrom); it returns the first sequence after the sealed ones.
func (l *Log) readSealed(from uint64, in *interner, values *ValueResolver, fn func(Event) error) (uint64, error) {
	segs, err := l.segments()
	if err != nil || len(segs) == 0 {
		return from, err
	}
	lost, err := l.lostToSalvage()
	if err != nil {
		return from, err
	}
	for _, s := range segs {
		if s.Last < from {
			continue
		}
		recs, err := l.sealedRecords(s)
		if err != nil {
			return from, err
		}
		for _, r := range recs {
			if r.seq < from || lost.Contains(r.seq) {
				continue // a salvage counted it lost (an effect.queued whose commit's values were lost)
			}
			if err := l.deliver(r, in, values, fn); err != nil {
				return from, err
			}
		}
		from = s.Last + 1
	}
	return from, nil
}

// deliver decodes r and hands it to fn.
func (l *Log) deliver(r segRecord, in *interner, values *ValueResolver, fn func(Event) error) error {
	e, err := decodeRecord(r.seq, r.raw, in)
	if err != nil {
		return err
	}
	if err := values.resolve(&e, l.eventAt); err != nil {
		return err
	}
	return fn(e)
}

// sealedLookup finds sealed records by sequence, loading each segment once.
type sealedLookup struct {
	l     *Log
	segs  []SegmentSealed
	cache map[string]segRecords
}

// record returns the sealed record seq (nil: no segment covers it).
func (s *sealedLookup) record(seq uint64) ([]byte, error) {
	if s.segs == nil {
		segs, err := s.l.segments()
		if err != nil {
			return nil, err
		}
		s.segs = append(segs, SegmentSealed{}) // not nil once read
		s.cache = map[string]segRecords{}
	}
	for _, seg := range s.segs {
		if seg.Name == "" || seq < seg.First || seq > seg.Last {
			continue
		}
		recs, ok := s.cache[seg.Name]
		if !ok {
			var err error
			if recs, err = s.l.loadSegment(seg); err != nil {
				return nil, err
			}
			s.cache[seg.Name] = recs
		}
		return recs.Get(u64(seq)), nil
	}
	return nil, nil
}

// fill decodes the sealed events of out at the indexes pending (each
// holding only its Seq) from their segments. A sequence no segment covers
// is left as it is (no Payload).
func (s *sealedLookup) fill(out []Event, pending []int) error {
	for _, i := range pending {
		raw, err := s.record(out[i].Seq)
		if err != nil || raw == nil {
			return err
		}
		if out[i], err = decodeRecord(out[i].Seq, raw, nil); err != nil {
			return err
		}
	}
	return nil
}

// walkSegments walks the chain through every sealed segment, from the
// genesis value (see VerifyChain); w ends after the last one.
func (l *Log) walkSegments(ctx context.Context, w *chainWalker) error {
	var segs []SegmentSealed
	err := l.view(func(tx *bolt.Tx) (err error) {
		meta := tx.Bucket(bucketMeta)
		if w.lost, err = salvageLost(meta); err != nil {
			return err
		}
		segs, err = sealedSegments(tx)
		return err
	})
	for _, s := range segs {
		if err != nil {
			return err
		}
		if err = ctx.Err(); err == nil {
			err = l.walkSegment(w, s)
		}
	}
	if err == nil && len(segs) > 0 {
		w.rep.Segments = len(segs)
		w.rep.Stray, err = l.StraySegments()
	}
	return err
}

// walkSegment walks the records of segment s.
func (l *Log) walkSegment(w *chainWalker, s SegmentSealed) error {
	if err := w.enterSegment(s); err != nil {
		return err
	}
	recs, err := l.sealedRecords(s)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.step(recs, r.seq, r.raw); err != nil {
			return err
		}
	}
	if w.c.String() != s.LastHash {
		return &ChainBrokenError{Seq: s.Last, Reason: fmt.Sprintf("the chain value after segment %s is not the one its seal recorded", s.Name)}
	}
	if w.rep.Head < s.Last && !w.lost.ContainsAll(w.rep.Head+1, s.Last) {
		return &ChainBrokenError{Seq: w.rep.Head + 1, Reason: "the record is missing from segment " + s.Name}
	}
	w.rep.Head = s.Last
	return nil
}

// enterSegment checks that segment s continues the chain walked so far.
// After a salvage's recorded hole (the segments before s were lost) the
// chain restarts at the first link s's seal recorded, as it does at the
// first chained record after a hole in log.db.
func (w *chainWalker) enterSegment(s SegmentSealed) error {
	if err := w.gap(w.rep.Head, s.First); err != nil {
		return err
	}
	if h, err := ParseChainHash(s.FirstLink); err == nil && w.restart {
		w.restart = false
		w.rep.Restarts[len(w.rep.Restarts)-1].At = s.First
		w.c, w.rep.Head = h, s.First-1 // the hole is passed (not named again by the next step)
	}
	if w.c.String() != s.FirstLink {
		return &ChainBrokenError{Seq: s.First, Reason: fmt.Sprintf("segment %s continues a chain value that is not the one before it", s.Name)}
	}
	return nil
}

// lostToSalvage is the sequences a salvage recorded as lost. A kept
// segment can hold one: an effect.queued whose commit's entity.persisted
// was in a segment the salvage lost cannot be read, and the segment cannot
// drop it.
func (l *Log) lostToSalvage() (lost SeqRanges, err error) {
	err = l.view(func(tx *bolt.Tx) error {
		lost, err = salvageLost(tx.Bucket(bucketMeta))
		return err
	})
	return lost, err
}
