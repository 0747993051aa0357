package events

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// keptStreams are the streams whose records a seal leaves in log.db: the
// ones a store reads when it opens (entity schemas, the snapshots the log
// vouches for, salvage holes, the segments), so that opening never reads
// a segment.
var keptStreams = map[string]bool{SchemaStream: true, SnapshotStream: true, IntegrityStream: true, SegmentStream: true}

// SealReport is what Log.Seal did.
type SealReport struct {
	Segment SegmentSealed // the seal's segment.sealed payload
	Event   Event         // the segment.sealed event, stamped
	Path    string        // the segment file
	// Replaced is true when a stray file of the same name (an earlier
	// seal that did not commit) was replaced.
	Replaced bool
}

// sealPlan is the range a seal moves and its records.
type sealPlan struct {
	first, last uint64
	firstLink   ChainHash
	lastHash    ChainHash
	sealed      segRecords // the records moving to the segment, as log.db stores them
	file        segRecords // the segment's records: sealed, in replica form for a replicated log
	kept        segRecords // the records of kept streams staying in log.db
	refs        []indexRef // the stream index entries of the sealed records
	runs        streamRuns // the sealed records' versions by stream
}

// Seal moves the records with seq < below (and after the last segment)
// out of log.db into a new sealed segment in the log's segment store
// (Options.Segments: the store's segments folder or an object store),
// fenced by f like an append (I01): it stores the segment durably (a
// folder: 0600, synced with the folder; an object store: uploaded),
// reads it back and checks every record and the chain, then in one
// transaction appends a segment.sealed event vouching for it and removes
// the records it holds: upload before delete. The records of keptStreams stay in
// log.db. A crash at any step leaves the records in log.db (a segment
// file written but not vouched for is ignored, and removed by the next
// seal that commits from the same record) or in a segment the log
// vouches for. Readers
// (ReadFrom, ReadStream, VerifyChain from the genesis value) read
// through the segments; opening the log and VerifyChain from a checkpoint
// never read them. A replicated log seals its records in replica form
// (fileForm), and its standbys seal the same range when they apply the
// segment.sealed event (ApplyReplica). Errors: ErrSealRefused (nothing to
// seal, a range crossing a salvage's holes, a seal meanwhile);
// *ChainBrokenError when the records to seal do not continue the chain;
// *SegmentError when the file read back differs or cannot be read;
// ErrSegmentStoreUnavailable when the store refuses the write; the
// errors of Append.
func (l *Log) Seal(f Fence, below uint64) (SealReport, error) {
	p, err := l.planSeal(below)
	if err != nil {
		return SealReport{}, err
	}
	seg := p.segment()
	there, err := l.segmentStored(seg.Name)
	if err != nil {
		return SealReport{}, fmt.Errorf("seal %s: %w", seg.Name, err)
	}
	rep := SealReport{Path: l.segmentPath(seg.Name), Replaced: there}
	if seg.Size, seg.Digest, err = l.putSegment(seg.Name, p.file); err != nil {
		return rep, err
	}
	failpoint.Inject(failpoint.SealAfterSync)
	if err := l.checkWritten(seg, p); err != nil {
		return rep, err
	}
	failpoint.Inject(failpoint.SealAfterReadBack)
	rep.Segment = seg
	rep.Event, err = l.commitSeal(f, seg, p)
	if err == nil {
		failpoint.Inject(failpoint.SealAfterCommit)
		l.removeStrays(seg)
	}
	return rep, err
}

// removeStrays deletes, once seg is vouched for, the files of earlier
// seals that did not commit and started at the same record (the next
// seal of a retention policy starts there but ends elsewhere, so it does
// not replace them): every record they hold is in seg or still in
// log.db. Only a file whose chain starts from seg's first link is this
// log's: another store's segment from the same sequence (two stores
// pointed at one folder or bucket) links from its own genesis and is left
// alone. Best effort: one that stays is listed as stray, as before.
func (l *Log) removeStrays(seg SegmentSealed) {
	ctx := context.Background()
	prefix := fmt.Sprintf("%020d-", seg.First)
	stored, err := segstore.ListPrefix(ctx, l.segs, prefix)
	if err != nil {
		return
	}
	for _, s := range stored {
		if s.Name != seg.Name && sameFirstLink(s.Name, seg) {
			_ = l.segs.Delete(ctx, s.Name)
		}
	}
}

// sameFirstLink reports whether name is a segment's file name whose chain
// starts from seg's first link (FIRST-LAST-LINK-HASH.seg.zst).
func sameFirstLink(name string, seg SegmentSealed) bool {
	parts := strings.Split(strings.TrimSuffix(name, segmentSuffix), "-")
	return strings.HasSuffix(name, segmentSuffix) && len(parts) == 4 && len(seg.FirstLink) >= 16 &&
		parts[2] == seg.FirstLink[:16]
}

// segment is the seal's payload, without the file's size and digest.
func (p *sealPlan) segment() SegmentSealed {
	return SegmentSealed{Name: segmentName(p.first, p.last, p.firstLink, p.lastHash), First: p.first, Last: p.last,
		FirstLink: p.firstLink.String(), LastHash: p.lastHash.String(), Records: uint64(len(p.sealed)), Kept: uint64(len(p.kept))}
}

// planSeal reads the records a seal below below moves and checks their
// chain from the value the last segment ends with (or the genesis value).
func (l *Log) planSeal(below uint64) (*sealPlan, error) {
	p := &sealPlan{runs: streamRuns{}}
	var lost SeqRanges
	err := l.view(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		last, ok, err := lastSegment(tx)
		if err != nil {
			return err
		}
		if lost, err = salvageLost(meta); err != nil {
			return err
		}
		p.first, p.firstLink = 1, Genesis(l.storeID)
		if ok {
			p.first = last.Last + 1
			if p.firstLink, err = ParseChainHash(last.LastHash); err != nil {
				return corrupt(CheckBucket, 0, "the manifest's segment %s: %v", last.Name, err)
			}
		}
		p.last = min(below-1, getU64(meta, metaHead))
		return nil
	})
	switch {
	case err != nil:
		return nil, err
	case below == 0 || p.last < p.first:
		return nil, fmt.Errorf("%w: nothing below seq %d is left in log.db to seal (sealed up to %d)", ErrSealRefused, below, p.first-1)
	case overlaps(lost, p.first, p.last):
		return nil, fmt.Errorf("%w: seqs %d..%d cross a salvage's holes (%s)", ErrSealRefused, p.first, p.last, lost)
	}
	return p, l.readPlan(p)
}

// readPlan reads the plan's records, parts them into sealed and kept and
// walks their chain.
func (l *Log) readPlan(p *sealPlan) error {
	all, err := l.logRange(p.first, p.last)
	if err != nil {
		return err
	}
	w := newChainWalker(l.storeID, nil, false)
	w.c, w.prevChained, w.rep.Head = p.firstLink, p.first > 1, p.first-1
	for _, r := range all {
		if err := w.step(all, r.seq, r.raw); err != nil {
			return err
		}
		if rec, _ := parseRaw(r.seq, r.raw); keptStreams[rec.h.Stream] {
			p.kept = append(p.kept, r)
		} else {
			p.sealed = append(p.sealed, r)
			p.refs = append(p.refs, indexRef{key: indexKey(rec.h.Stream, rec.h.Version), seq: r.seq})
			p.runs.note(rec.h.Stream, rec.h.Version)
		}
	}
	if w.rep.Head != p.last {
		return &ChainBrokenError{Seq: w.rep.Head + 1, Reason: "the record is missing"}
	}
	p.lastHash = w.c
	return p.fileForm(l.repl != nil)
}

// fileForm sets the segment's records: the sealed ones as stored, or in
// replica form (the fencing token left out) when replica is set, so that
// every host of a replicated store, whose standbys hold the records in
// that form, builds the same file from its own log (sealreplica.go).
func (p *sealPlan) fileForm(replica bool) error {
	if !replica {
		p.file = p.sealed
		return nil
	}
	p.file = make(segRecords, len(p.sealed))
	for i, r := range p.sealed {
		raw, err := ReplicaForm(r.raw)
		if err != nil {
			return err
		}
		p.file[i] = segRecord{seq: r.seq, raw: raw}
	}
	return nil
}

// putSegment stores recs compressed as the segment name in the log's
// segment store (a folder: through a temporary file, synced, renamed,
// the folder synced; an object store: uploaded with its MD5); it returns
// the file's size and digest.
func (l *Log) putSegment(name string, recs segRecords) (int64, string, error) {
	file, err := encodeSegment(l.storeID, recs)
	if err != nil {
		return 0, "", err
	}
	err = l.segs.Put(context.Background(), name, file)
	l.noteSegments(err)
	if err != nil {
		return 0, "", fmt.Errorf("write segment %s: %w", name, err)
	}
	return int64(len(file)), fileDigest(file), nil
}

// segmentPath is where the segment name lives, for people: its file's
// path in a folder, else the store's location and the name.
func (l *Log) segmentPath(name string) string {
	if d, ok := l.segs.(*segstore.Dir); ok {
		return filepath.Join(d.Path(), name)
	}
	return l.segs.Location().String() + "/" + name
}

// checkWritten reads the segment back and checks it holds the plan's
// records, byte for byte, and that the chain runs through them and the
// kept ones from FirstLink to LastHash.
func (l *Log) checkWritten(seg SegmentSealed, p *sealPlan) error {
	back, err := l.loadSegment(seg)
	if err != nil {
		return err
	}
	damaged := &SegmentError{Err: ErrSegmentDamaged, Name: seg.Name, Reason: "read back, it differs from what was written"}
	for i, r := range back {
		if i >= len(p.file) || r.seq != p.file[i].seq || !bytes.Equal(r.raw, p.file[i].raw) {
			return damaged
		}
	}
	w := newChainWalker(l.storeID, nil, false)
	w.c, w.prevChained, w.rep.Head = p.firstLink, p.first > 1, p.first-1
	all := mergeRecords(back, p.kept)
	for _, r := range all {
		if err := w.step(all, r.seq, r.raw); err != nil {
			return err
		}
	}
	if w.c != p.lastHash {
		return damaged
	}
	return nil
}

// commitSeal appends the segment.sealed event for seg and removes the
// sealed records from log.db in one transaction.
func (l *Log) commitSeal(f Fence, seg SegmentSealed, p *sealPlan) (Event, error) {
	version, err := l.StreamVersion(SegmentStream)
	if err != nil {
		return Event{}, err
	}
	unit := Unit{Streams: []StreamAppend{{Stream: SegmentStream, ExpectedVersion: version,
		Events: []Event{New(SegmentStream, seg, l.clock.Now())}}}}
	res, wait, err := l.appendAsync(f, []Unit{unit}, func(tx *bolt.Tx) error { return p.remove(tx, seg) })
	if err == nil {
		err = wait()
	}
	if err == nil && res[0].Err != nil {
		err = res[0].Err
	}
	if err != nil {
		return Event{}, fmt.Errorf("seal %s: %w", seg.Name, err)
	}
	return unit.Streams[0].Events[0], nil
}

// remove deletes the sealed records and their stream index entries (and
// a chunk of those an earlier build kept, pruneSealedIndex) and records
// seg in the manifest (in the seal's transaction: one new entry,
// addSegment) and its streams in the segment streams index
// (indexSegmentStreams), after checking no other seal came first; a
// chain checkpoint inside the sealed range is dropped (Open starts after
// the segment instead).
func (p *sealPlan) remove(tx *bolt.Tx, seg SegmentSealed) error {
	meta := tx.Bucket(bucketMeta)
	last, ok, err := lastSegment(tx)
	if err != nil {
		return err
	}
	if (ok && last.Last+1 != p.first) || (!ok && p.first != 1) {
		return fmt.Errorf("%w: another seal committed meanwhile", ErrSealRefused)
	}
	b := tx.Bucket(bucketEvents)
	for _, r := range p.sealed {
		if !bytes.Equal(b.Get(u64(r.seq)), r.raw) {
			return fmt.Errorf("%w: record %d changed meanwhile", ErrSealRefused, r.seq)
		}
		if err := b.Delete(u64(r.seq)); err != nil {
			return err
		}
	}
	err = addSegment(tx, seg)
	if err == nil {
		err = indexSegmentStreams(tx, seg.First, p.runs, len(p.sealed))
	}
	if err == nil {
		err = bumpManifest(meta)
	}
	if err == nil {
		err = p.dropIndex(tx)
	}
	if err == nil {
		err = pruneSealedIndex(tx, seg.Last+1)
	}
	if err != nil {
		return err
	}
	if cp, err := decodeChainCheckpoint(meta.Get(metaChainVerified)); err == nil && cp.Seq <= seg.Last {
		if err := meta.Delete(metaChainVerified); err != nil {
			return err
		}
	}
	return failpoint.Err(failpoint.SealBeforeCommit)
}

// overlaps reports whether r holds any sequence of first..last.
func overlaps(r SeqRanges, first, last uint64) bool {
	var span SeqRanges
	span.AddRange(first, last)
	return span.Minus(r).Count() != span.Count()
}
