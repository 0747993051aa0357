package events

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
)

// ChainRestart is where a salvage left a hole in the log: the records in
// Lost are gone, so the chain cannot run through them, and verification
// takes up the chain again from the link of the first chained record after
// them (At). Links before and after the hole each verify; the hole itself
// is vouched for only by the salvage that recorded it.
type ChainRestart struct {
	Lost SeqRanges // the sequences a salvage recorded as lost
	At   uint64    // the chained record whose link the chain restarts from (0: none after the hole)
	// Recorded is the integrity.holes_recorded record that names the hole
	// (0: none does): a head pinned at or after it may vouch across the
	// hole; one pinned before it never does.
	Recorded uint64
}

// ChainReport is the result of Log.VerifyChain.
type ChainReport struct {
	StoreID string
	Genesis ChainHash
	// Head is the last record verified; HeadHash is c(Head), the value a
	// third party pins.
	Head     uint64
	HeadHash ChainHash
	Records  uint64 // records walked
	// FirstChained is the first record that carries a link (format 3); 0
	// when the log has none yet (all written before the chain).
	FirstChained uint64
	Restarts     []ChainRestart
	Pinned       bool // a pin was given and the log extends it
	// From is the chain checkpoint the walk started after
	// (ChainVerifyOptions.FromCheckpoint): the records up to it were not
	// read. 0: the walk started from the genesis value.
	From uint64
	// Distrusted says why a recorded checkpoint was not used (the log
	// does not vouch for it), so the walk started from the genesis value.
	Distrusted string
	// Segments is how many sealed segments the walk read (0: it started
	// after them, or there are none); Stray names the files of the
	// segments folder no seal vouches for (ignored).
	Segments int
	Stray    []string

	complete   bool            // the walk reached the head and passed
	checkpoint ChainCheckpoint // the last chained record walked (RecordChainCheckpoint)
}

// ChainVerifyOptions configures VerifyChain.
type ChainVerifyOptions struct {
	Pin *ChainPin // when set, c(Pin.Seq) must be Pin.Hash
	// Progress, when set, is called after each chunk of records with the
	// records walked so far and the log's head.
	Progress func(done, total uint64)
	// AcceptSalvageHoles accepts a chain that restarts after holes a
	// salvage recorded (the report still lists each one). Without it,
	// such a walk ends in *ChainRestartedError (ErrChainRestarted), since
	// nothing ties the records after a hole to the genesis value.
	AcceptSalvageHoles bool
	// FromCheckpoint starts the walk after the log's chain checkpoint
	// (ChainCheckpoint) when the log vouches for it, so only the records
	// appended since are read; a change to an older record goes
	// unnoticed. Without a checkpoint the log vouches for, the walk starts
	// from the genesis value. Ignored with a Pin.
	FromCheckpoint bool
}

// verifyChunk is how many records one read transaction of VerifyChain
// walks, so a long verification never pins one read transaction.
const verifyChunk = 4096

// VerifyChain walks the log's hash chain from the genesis value of its
// store id to its last record (see ChainHash), checking each record's
// checksum and that each format-3 record's link is the chain value of the
// records before it, and returns the head hash. A record written before
// the chain (format 1 or 2) has no link: it is covered by the links of the
// chained records after it, and by a pin. It never writes.
// Errors: *ChainBrokenError (ErrChainBroken) at the first record whose
// stored bytes are not what the chain committed to (the report holds what
// was verified before it); *ChainPinError (ErrChainPinMismatch);
// *ChainRestartedError (ErrChainRestarted) when the chain restarts after
// a salvage's hole and opts does not accept holes (the report is the
// whole walk's); ctx's; ErrLogClosed.
func (l *Log) VerifyChain(ctx context.Context, opts ChainVerifyOptions) (*ChainReport, error) {
	w := newChainWalker(l.storeID, opts.Pin, false)
	if err := w.checkPin(0); err != nil {
		return w.rep, err
	}
	var err error
	if opts.FromCheckpoint && opts.Pin == nil {
		err = l.startAtCheckpoint(w)
	} else {
		err = l.walkSegments(ctx, w)
	}
	if err != nil {
		return w.rep, err
	}
	var head uint64
	for {
		if err := ctx.Err(); err != nil {
			return w.rep, err
		}
		more := 0
		err := l.view(func(tx *bolt.Tx) error {
			var err error
			head = getU64(tx.Bucket(bucketMeta), metaHead)
			if w.lost == nil {
				if w.lost, err = salvageLost(tx.Bucket(bucketMeta)); err != nil {
					return err
				}
			}
			more, err = w.chunk(tx.Bucket(bucketEvents), verifyChunk)
			return err
		})
		if opts.Progress != nil {
			opts.Progress(w.rep.Records, head)
		}
		if err != nil {
			return w.rep, err
		}
		if more == 0 {
			if err := w.end(head); err != nil {
				return w.rep, err
			}
			err := w.holes(opts.AcceptSalvageHoles)
			w.rep.complete = err == nil
			return w.rep, err
		}
	}
}

// startAtCheckpoint moves w past the log's chain checkpoint when the log
// vouches for it.
func (l *Log) startAtCheckpoint(w *chainWalker) error {
	p, ok, distrust, err := l.CheckedChainCheckpoint()
	if err != nil {
		return err
	}
	segs, err := l.Segments()
	if err != nil {
		return err
	}
	if n := len(segs); n > 0 && (!ok || p.Seq <= segs[n-1].Last) {
		return w.startAfterSegment(segs[n-1])
	}
	if !ok {
		w.rep.Distrusted = distrust
		return nil
	}
	w.c, w.prevChained = p.Hash, true
	w.rep.Head, w.rep.HeadHash, w.rep.From = p.Seq, p.Hash, p.Seq
	w.rep.checkpoint = ChainCheckpoint{Seq: p.Seq, Hash: p.Hash, From: p.From, Records: p.Records}
	return nil
}

// recordGetter looks a stored record up by its key (an 8-byte sequence):
// log.db's events bucket, or a sealed segment's records.
type recordGetter interface {
	Get(key []byte) []byte
}

// startAfterSegment moves w past the last sealed segment s without
// reading it: the chain value after it is the one its seal recorded, which
// the next chained record's link must be.
func (w *chainWalker) startAfterSegment(s SegmentSealed) error {
	h, err := ParseChainHash(s.LastHash)
	if err != nil {
		return &ChainBrokenError{Seq: s.Last, Reason: "the seal of segment " + s.Name + " records no chain value"}
	}
	w.c, w.prevChained = h, true
	w.rep.Head, w.rep.HeadHash, w.rep.From = s.Last, h, s.Last
	w.rep.checkpoint = ChainCheckpoint{}
	return nil
}

// chainWalker follows the chain over records in sequence order.
type chainWalker struct {
	rep     *ChainReport
	c       ChainHash
	lost    SeqRanges
	pin     *ChainPin
	lenient bool // adopt a mismatched link instead of failing (an append deriving the tail)
	restart bool // a salvage hole was passed: adopt the next link
	// unrecorded are the holes walked that no integrity.holes_recorded
	// record walked since names: a pin here predates their recording.
	unrecorded SeqRanges
	// prevChained: the last record walked carries a link.
	prevChained bool
}

func newChainWalker(storeID string, pin *ChainPin, lenient bool) *chainWalker {
	g := Genesis(storeID)
	return &chainWalker{rep: &ChainReport{StoreID: storeID, Genesis: g, HeadHash: g}, c: g, pin: pin, lenient: lenient}
}

// chunk walks up to n records after the last one walked; it returns how
// many it walked.
func (w *chainWalker) chunk(b *bolt.Bucket, n int) (int, error) {
	cur := b.Cursor()
	done := 0
	for k, v := cur.Seek(u64(w.rep.Head + 1)); k != nil && done < n; k, v = cur.Next() {
		if len(k) != 8 {
			return done, &ChainBrokenError{Seq: w.rep.Head + 1, Reason: fmt.Sprintf("a key of %d bytes among the records", len(k))}
		}
		if err := w.step(b, binary.BigEndian.Uint64(k), v); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

// step walks record seq (stored bytes v).
func (w *chainWalker) step(b recordGetter, seq uint64, v []byte) error {
	if err := w.gap(w.rep.Head, seq); err != nil {
		return err
	}
	r, err := parseRaw(seq, v)
	if err != nil && w.lenient {
		w.rep.Head, w.restart = seq, true // taken up again from the next link
		return nil
	}
	if err != nil {
		return &ChainBrokenError{Seq: seq, Reason: strings.TrimPrefix(err.Error(), ErrCorruptRecord.Error()+": seq "+strconv.FormatUint(seq, 10)+": ")}
	}
	if err := w.link(b, seq, &r); err != nil {
		return err
	}
	w.recorded(seq, &r)
	w.c = r.chainValue(w.c)
	w.prevChained = !r.h.Link.IsZero()
	w.rep.Head, w.rep.HeadHash = seq, w.c
	w.rep.Records++
	if w.prevChained {
		w.rep.checkpoint = ChainCheckpoint{Seq: seq, Hash: w.c, From: w.rep.From, Records: w.rep.Records}
	}
	return w.checkPin(seq)
}

// gap handles the sequences between the last record walked and seq: a
// salvage's recorded losses start a restart, anything else is a removed
// record.
func (w *chainWalker) gap(last, seq uint64) error {
	if seq <= last+1 {
		return nil
	}
	if !w.lost.ContainsAll(last+1, seq-1) && !w.lenient {
		return &ChainBrokenError{Seq: last + 1, Reason: "the record is missing"}
	}
	var hole SeqRanges
	hole.AddRange(last+1, seq-1)
	w.rep.Restarts = append(w.rep.Restarts, ChainRestart{Lost: hole})
	w.restart = true
	w.unrecorded = w.unrecorded.Union(hole)
	switch {
	case w.pin == nil || w.pin.Seq >= seq:
	case w.pin.Seq > last:
		return &ChainPinError{Pin: *w.pin, Hole: hole, Reason: "the pinned record was lost to a salvage"}
	default:
		// The pin vouched for the records up to it; nothing ties the
		// records after the hole to them, whatever their links claim (a
		// record removed and named in salvage_lost leaves the next link
		// committing to it): only a head pinned after the hole was
		// recorded vouches for them.
		return &ChainPinError{Pin: *w.pin, Hole: hole, Reason: fmt.Sprintf("the pin predates salvage hole %s: no link ties the records "+
			"after the hole to the pinned head, so it vouches for nothing after seq %d (pin a head taken after the hole)", hole, last)}
	}
	return nil
}

// recorded notes the holes an integrity.holes_recorded record names: a
// head pinned from it on may vouch across them.
func (w *chainWalker) recorded(seq uint64, r *chainRecord) {
	if r.h.typ != TypeHolesRecorded || len(w.unrecorded) == 0 {
		return
	}
	m, err := decodePayload(r.payload, nil)
	lost, _ := m["lost"].(string)
	named, perr := parseSeqRanges(lost)
	if err != nil || perr != nil {
		return // names nothing: the holes stay unrecorded
	}
	w.unrecorded = w.unrecorded.Minus(named)
	for i := range w.rep.Restarts {
		if rs := &w.rep.Restarts[i]; rs.Recorded == 0 && len(rs.Lost.Minus(named)) == 0 {
			rs.Recorded = seq
		}
	}
}

// link checks a chained record's link against the chain so far.
func (w *chainWalker) link(b recordGetter, seq uint64, r *chainRecord) error {
	if r.h.Link.IsZero() {
		return nil
	}
	if w.rep.FirstChained == 0 {
		w.rep.FirstChained = seq
	}
	switch {
	case w.restart:
		w.restart = false
		w.rep.Restarts[len(w.rep.Restarts)-1].At = seq
		w.c = r.h.Link
	case r.h.Link == w.c:
	case w.lenient:
		w.c = r.h.Link
	default:
		return w.broken(b, seq, r)
	}
	return nil
}

// broken attributes a link mismatch at seq: when the next record's link
// agrees with this one, the chain after seq is intact and the record
// before it is the one that changed; otherwise this record is. Records
// written before the chain carry no link: a change to one of them is
// found at the first chained record after them, which is reported.
func (w *chainWalker) broken(b recordGetter, seq uint64, r *chainRecord) error {
	if !w.prevChained && seq > 1 {
		return &ChainBrokenError{Seq: seq, Reason: "its link does not match the records before it, written before the chain: one of them was changed, or this link"}
	}
	if next, err := parseRaw(seq+1, b.Get(u64(seq+1))); err == nil && next.h.Link == r.chainValue(r.h.Link) && seq > 1 {
		return &ChainBrokenError{Seq: seq - 1, Reason: "the record differs from the one the next record's link commits to"}
	}
	return &ChainBrokenError{Seq: seq, Reason: "its link is not the chain value of the records before it"}
}

// checkPin compares the chain value after seq with a pin at seq.
func (w *chainWalker) checkPin(seq uint64) error {
	if w.pin == nil || w.pin.Seq != seq {
		return nil
	}
	if w.c != w.pin.Hash {
		return &ChainPinError{Pin: *w.pin, Got: w.c, Reason: "the log's chain value there differs from the pinned one: this log does not extend the pinned head (a rewritten log, or a pin of another log)"}
	}
	if len(w.unrecorded) > 0 {
		// The chain value matches, but the hole's records are gone and no
		// record before the pin says the store knew: the pin was taken
		// before the hole appeared (it commits to records the log no
		// longer has), or the hole was made while no store ran (a record
		// removed and named in salvage_lost).
		return &ChainPinError{Pin: *w.pin, Got: w.c, Hole: w.unrecorded, Reason: fmt.Sprintf("the pin predates salvage hole %s: "+
			"it commits to records the log no longer has, and no %s record before it names the hole "+
			"(pin a head taken after the store recorded the hole)", w.unrecorded, TypeHolesRecorded)}
	}
	w.rep.Pinned = true
	return nil
}

// end checks the sequences after the last record up to the head and a
// pin past the end.
func (w *chainWalker) end(head uint64) error {
	last := w.rep.Head
	if head > last && !w.lost.ContainsAll(last+1, head) {
		return &ChainBrokenError{Seq: last + 1, Reason: "the record is missing"}
	}
	if w.pin != nil && !w.rep.Pinned {
		return &ChainPinError{Pin: *w.pin, Reason: fmt.Sprintf("the log ends at %d, before the pinned sequence", last)}
	}
	return nil
}

// holes refuses a walk that restarted after a salvage's hole unless holes
// are accepted.
func (w *chainWalker) holes(accept bool) error {
	if accept || len(w.rep.Restarts) == 0 {
		return nil
	}
	first := w.rep.Restarts[0]
	return &ChainRestartedError{Lost: first.Lost, At: first.At, Holes: len(w.rep.Restarts)}
}
