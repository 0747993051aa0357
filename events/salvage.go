package events

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// SalvageReport says what SalvageLog recovered and what it could not.
type SalvageReport struct {
	StoreID string
	// NewStoreID is set when the source's store id was unreadable and the
	// new log got a new one.
	NewStoreID bool
	Head       uint64 // the source's head, kept: lost sequences are never reused
	Recovered  uint64 // records copied, byte for byte, under their own sequences
	// FromScan are the recovered sequences found on pages outside the
	// source's B+tree (where the tree is damaged).
	FromScan SeqRanges
	// Lost are the sequences up to the head that were not recovered
	// (Ambiguous included, and what an earlier salvage lost).
	Lost SeqRanges
	// Ambiguous are lost sequences for which the scan found two different
	// intact records and neither is reachable from the tree.
	Ambiguous SeqRanges
	// PastHead counts intact records found with a sequence past the head:
	// writes of a commit that never completed, not copied.
	PastHead int
	// HeadFrom says where the head came from: HeadFromTree; HeadFromOlder
	// when only the other meta page's tree leads to one; or, when no valid
	// meta page does (the root page is lost, e.g. the file was truncated),
	// HeadFromCopy (an older copy of the root page found by the scan) or
	// HeadFromOptions (SalvageOptions.Head), the higher one.
	HeadFrom HeadSource
	// Unconfirmed are intact records past a head not read from the newest
	// meta page's tree: they may belong to a commit that never completed,
	// so they are not copied; they are counted in Lost, and Head is raised
	// past them so they are never reused.
	Unconfirmed SeqRanges
	// Problems counts the damage met in the source (see VerifyLogFile).
	Problems int
	// Segments names the sealed segments kept: they verified, were copied
	// into the segments folder beside the new log, and their records count
	// as recovered. SegmentsLost names the ones that did not (missing or
	// damaged): their records count as lost.
	Segments     []string
	SegmentsLost []*SegmentError
}

// HeadSource says where a salvage read the log's head.
type HeadSource string

// Head sources.
const (
	HeadFromTree    HeadSource = "tree"       // the meta bucket of the newest valid meta page's tree
	HeadFromOlder   HeadSource = "older meta" // the tree of the other meta page (the newest one's is unreadable)
	HeadFromCopy    HeadSource = "root copy"  // an older copy of the root page
	HeadFromOptions HeadSource = "--head"     // SalvageOptions.Head, given by the operator
	// HeadFromVouched: SalvageOptions.Head past the head a tree gave —
	// the operator vouches (e.g. with the read model's checkpoint) that
	// the records after the tree's head were committed: a newest commit
	// whose meta page was lost.
	HeadFromVouched HeadSource = "--head past the tree's"
)

// SalvageOptions are what the operator knows when the log's own head or
// store id is unreadable, or when the log lost its newest commits.
type SalvageOptions struct {
	// Head is a sequence known to be committed (the read model's
	// checkpoint, a backup's head): records up to it are salvaged, also
	// past the head a valid meta page gives (its newest commits lost with
	// a damaged meta page: their records may still be in the file).
	Head uint64
	// StoreID is the store's id (read.sqlite's hk_meta store_id).
	StoreID string
	// Segments is where the source's sealed segments live (nil: the
	// folder beside it). The ones kept are copied into the folder beside
	// the new log.
	Segments segstore.Store
}

// salvageBatch is how many records one transaction of the new log holds.
const salvageBatch = 8192

// SalvageLog copies every readable record of the log file at src into a new
// log file at dst, and reports exactly which sequences were lost. It never
// writes to src: it reads it with ReadAt under a shared file lock, without
// bbolt. Records come first from the B+tree of the newest valid meta page,
// walked page by page with bounds checks (damaged pages are skipped); then
// every leaf page of the file is scanned, and a record found there is
// accepted for a sequence the tree did not give when its checksum is
// valid, its key and its content name the same sequence, that sequence is
// at most the head recorded by that meta, and no different intact copy of
// it exists (then it is lost as ambiguous). The new log keeps the store id,
// every record's bytes and sequence, and the head; the lost sequences are
// recorded in it (meta salvage_lost), so doctor and OpenLog accept those
// holes, and they are never reused. Stream versions never go back; the
// writer lease is kept, released, at an epoch no lower than any record's.
// The sealed segments the source vouches for that verify are copied into
// the segments folder beside dst and their records count as recovered;
// the others are named in the report and their records count as lost.
// dst is written beside itself and appears only once complete and
// verified. Errors: *StoreLockedError while a writer holds src;
// ErrSalvageTarget when dst exists; *LogCorruptError when no meta page or
// head can be read; I/O errors.
func SalvageLog(src, dst string, opts SalvageOptions) (*SalvageReport, error) {
	if _, err := os.Lstat(dst); !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s exists", ErrSalvageTarget, dst)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lockFile(f, false, DefaultOpenTimeout); err != nil {
		return nil, lockedError(src, err)
	}
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bf, err := openBoltFile(f, st.Size())
	if bf == nil {
		return nil, err
	}
	s := &salvage{f: bf, rep: &SalvageReport{}, pastHead: map[uint64]bool{}, opts: opts}
	if err != nil {
		s.rep.Problems++
	}
	if err := s.run(src, dst); err != nil {
		return nil, err
	}
	return s.rep, nil
}

// salvage is one SalvageLog run.
type salvage struct {
	f        *boltFile
	rep      *SalvageReport
	w        *treeWalk
	meta     map[string][]byte // the source's meta bucket
	have     SeqRanges         // sequences copied
	cands    map[uint64]candidate
	out      *salvageSink
	src, dst string // the source log and the new one
	kept     []SegmentSealed
	sealed   SeqRanges // the records of kept segments
	// shadowed are the ranges of segments not kept that a kept one
	// follows: readers and the chain walk go from one kept segment to the
	// next, so a record of those ranges copied into log.db would be read
	// by none; they are lost instead (the chain restarts after them).
	shadowed SeqRanges
	oldLost  SeqRanges
	pastHead map[uint64]bool
	problems int
	opts     SalvageOptions
	refs     salvageRefs // effect.queued records that refer to their commit's entity.persisted
}

// candidate is an intact record found by the scan.
type candidate struct {
	page  uint64
	index int
	sum   uint64
	dup   bool // a different intact copy exists
}

func (s *salvage) run(src, dst string) error {
	switch s.rep.HeadFrom = s.findHead(); {
	case s.rep.HeadFrom == HeadFromCopy:
		s.rep.Head = math.MaxUint64 // bound after the scan, by an older root copy
	case s.opts.Head > s.rep.Head:
		s.rep.Head, s.rep.HeadFrom = s.opts.Head, HeadFromVouched
	}
	tmp := dst + ".salvage-partial"
	out, err := newSalvageSink(tmp)
	if err != nil {
		return err
	}
	s.out, s.src, s.dst = out, src, dst
	err = s.copyAll()
	if cerr := out.close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = verifySalvaged(tmp)
	}
	if err == nil {
		err = publish(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		if len(s.rep.Segments) > 0 {
			os.RemoveAll(filepath.Join(filepath.Dir(dst), SegmentsDir))
		}
	}
	return err
}

// copyAll copies the tree's records, then the scan's, then writes meta,
// streams and leases.
func (s *salvage) copyAll() error {
	if err := s.readSegments(); err != nil {
		return err
	}
	if s.rep.HeadFrom != HeadFromCopy {
		if err := s.copyTree(); err != nil {
			return err
		}
	}
	s.scan()
	if err := s.boundHead(); err != nil {
		return err
	}
	if err := s.copyScanned(); err != nil {
		return err
	}
	if err := s.dropOrphans(); err != nil {
		return err
	}
	return s.finish()
}

// findHead reads the meta bucket of the newest valid meta whose tree gives
// one (else the other valid meta): head, store id. HeadFromCopy: neither
// does.
func (s *salvage) findHead() HeadSource {
	for n, i := range []int{s.f.inUse, 1 - s.f.inUse} {
		m := s.f.metas[i]
		if m.err != "" || m.root < 2 || m.root >= m.hwm {
			continue
		}
		w := newTreeWalk(s.f, m, s.problem)
		buckets := w.rootBuckets()
		meta := w.keyValues(buckets[string(bucketMeta)])
		if h := meta[string(metaHead)]; len(h) == 8 && buckets[string(bucketEvents)] != nil {
			s.w, s.meta = w, meta
			s.rep.Head = binary.BigEndian.Uint64(h)
			if n > 0 {
				return HeadFromOlder
			}
			return HeadFromTree
		}
	}
	s.w = newTreeWalk(s.f, boltMeta{}, s.problem) // no tree: streams and leases come from the records
	return HeadFromCopy
}

// boundHead, when no tree gave the head, takes the higher of the newest
// older copy of the meta bucket the scan found and SalvageOptions.Head;
// intact records past it are unconfirmed: not copied, and the head is
// raised past them.
func (s *salvage) boundHead() error {
	switch s.rep.HeadFrom {
	case HeadFromTree, HeadFromVouched:
		return nil
	case HeadFromOlder:
		s.unconfirm()
		return nil
	}
	if s.meta == nil {
		s.meta = map[string][]byte{}
	}
	s.rep.Head = 0
	if h := s.meta[string(metaHead)]; len(h) == 8 {
		s.rep.Head = binary.BigEndian.Uint64(h)
	}
	if s.opts.Head > s.rep.Head {
		s.rep.Head, s.rep.HeadFrom = s.opts.Head, HeadFromOptions
	}
	if s.meta[string(metaStoreID)] == nil && s.opts.StoreID != "" {
		s.meta[string(metaStoreID)] = []byte(s.opts.StoreID)
	}
	if s.rep.Head == 0 {
		return corrupt(CheckHead, 0, "no valid meta page or copy of the root page leads to the log's head, and none was given: "+
			"salvage cannot tell committed records from uncommitted ones")
	}
	s.unconfirm()
	return nil
}

// unconfirm sets aside the intact records past the head and raises the
// head past them.
func (s *salvage) unconfirm() {
	var past []uint64
	for seq := range s.cands {
		if seq > s.rep.Head {
			past = append(past, seq)
		}
	}
	for seq := range s.pastHead {
		past = append(past, seq)
	}
	clear(s.pastHead)
	slices.Sort(past)
	for _, seq := range past {
		s.rep.Unconfirmed.Add(seq)
		delete(s.cands, seq)
	}
	if n := len(past); n > 0 {
		s.rep.Head = past[n-1]
	}
}

func (s *salvage) problem(error) { s.problems++ }

// copyTree copies the intact records of the tree's events bucket, in order.
func (s *salvage) copyTree() error {
	buckets := s.w.rootBuckets()
	var err error
	s.w.walk(buckets[string(bucketEvents)], func(_ uint64, e pageElem) {
		seq, h, ok := s.accept(e)
		if !ok || err != nil || s.have.Contains(seq) || s.shadowed.Contains(seq) {
			return
		}
		if err = s.put(seq, e.value, h); err == nil {
			s.have.Add(seq)
		}
	})
	return err
}

// accept checks a leaf element as a record of this log up to the head.
func (s *salvage) accept(e pageElem) (uint64, header, bool) {
	if e.flags&bucketLeafFlag != 0 || len(e.key) != 8 {
		return 0, header{}, false
	}
	seq := binary.BigEndian.Uint64(e.key)
	h, err := recordHeader(seq, e.value)
	if err != nil {
		return 0, header{}, false
	}
	if seq == 0 || seq > s.rep.Head {
		s.pastHead[seq] = true
		return 0, header{}, false
	}
	return seq, h, true
}

// recordHeader checks a record's checksum and envelope (not its payload's
// type: intact records of a newer build are salvaged too).
func recordHeader(seq uint64, b []byte) (header, error) {
	if len(b) < 1+checksumLen {
		return header{}, &CorruptRecordError{Seq: seq, Reason: "truncated"}
	}
	body := b[:len(b)-checksumLen]
	if binary.LittleEndian.Uint64(b[len(body):]) != xxhash.Sum64(body) {
		return header{}, &CorruptRecordError{Seq: seq, Reason: "checksum mismatch"}
	}
	h, _, err := parseRecord(body, nil)
	if err == nil && h.Seq != seq {
		err = fmt.Errorf("record claims seq %d", h.Seq)
	}
	return h, err
}

// scan reads every leaf page of the file for intact records the tree did
// not give.
func (s *salvage) scan() {
	s.cands = map[uint64]candidate{}
	pages := uint64(s.f.size) / uint64(s.f.ps)
	for id := uint64(2); id < pages; id++ {
		p := s.f.loosePage(id, pages)
		if p == nil {
			continue
		}
		for i, e := range p.looseElements() {
			if s.rep.HeadFrom != HeadFromTree && e.flags&bucketLeafFlag != 0 && string(e.key) == string(bucketMeta) {
				s.metaCopy(e.value)
				continue
			}
			seq, _, ok := s.accept(e)
			if !ok || s.have.Contains(seq) {
				continue
			}
			s.candidate(seq, candidate{page: id, index: i, sum: xxhash.Sum64(e.value)})
		}
	}
}

// metaCopy considers an older copy of the meta bucket (inline in a copy of
// the root page): the one with the highest head wins.
func (s *salvage) metaCopy(value []byte) {
	_, inline, err := bucketRef(value)
	if err != nil || inline == nil {
		return
	}
	elems, err := inline.elements()
	if err != nil {
		return
	}
	m := map[string][]byte{}
	for _, e := range elems {
		m[string(e.key)] = e.value
	}
	h := m[string(metaHead)]
	if len(h) == 8 && (s.meta == nil || binary.BigEndian.Uint64(h) > binary.BigEndian.Uint64(s.meta[string(metaHead)])) {
		s.meta = m
	}
}

func (s *salvage) candidate(seq uint64, c candidate) {
	if s.sealed.Contains(seq) || s.shadowed.Contains(seq) {
		return // its record is in a kept segment, or no reader would reach it
	}
	old, ok := s.cands[seq]
	switch {
	case !ok:
		s.cands[seq] = c
	case old.sum != c.sum:
		old.dup = true
		s.cands[seq] = old
	}
}

// loosePage reads a page that names itself id and is a leaf, with as many
// of its overflow pages as the file holds; nil otherwise.
func (f *boltFile) loosePage(id, pages uint64) *rawPage {
	hb, err := f.readAt(int64(id)*int64(f.ps), pageHeaderSize)
	if err != nil {
		return nil
	}
	p := pageHeader(hb)
	if p.id != id || p.flags != flagLeaf {
		return nil
	}
	n := min(uint64(p.overflow)+1, pages-id)
	if p.buf, err = f.readAt(int64(id)*int64(f.ps), int(n)*f.ps); err != nil {
		return nil
	}
	return &p
}

// copyScanned copies the unambiguous scan candidates in sequence order.
func (s *salvage) copyScanned() error {
	var seqs, dups []uint64
	for seq, c := range s.cands {
		if c.dup {
			dups = append(dups, seq)
		} else {
			seqs = append(seqs, seq)
		}
	}
	slices.Sort(seqs)
	slices.Sort(dups)
	for _, seq := range dups {
		s.rep.Ambiguous.Add(seq)
	}
	pages := uint64(s.f.size) / uint64(s.f.ps)
	for _, seq := range seqs {
		c := s.cands[seq]
		e, ok := s.f.loosePage(c.page, pages).looseElement(c.index)
		if !ok || xxhash.Sum64(e.value) != c.sum {
			continue
		}
		h, _ := recordHeader(seq, e.value)
		if err := s.put(seq, e.value, h); err != nil {
			return err
		}
		s.rep.FromScan.Add(seq)
	}
	s.have = s.have.Union(s.rep.FromScan)
	return nil
}

func (p *rawPage) looseElement(i int) (pageElem, bool) {
	if p == nil {
		return pageElem{}, false
	}
	return p.element(i)
}

// finish computes the losses and writes streams, lease and meta.
func (s *salvage) finish() error {
	var all SeqRanges
	all.AddRange(1, s.rep.Head)
	s.rep.StoreID = string(s.meta[string(metaStoreID)])
	if s.rep.StoreID == "" {
		s.rep.StoreID, s.rep.NewStoreID = newToken()[:12], true
	}
	s.oldLost, _ = parseSeqRanges(string(s.meta[string(metaSalvageLost)]))
	s.rep.Lost = all.Minus(s.have).Union(s.oldLost.Minus(s.have))
	s.rep.Recovered = s.have.Count()
	streams, leases := s.oldStreams(), s.oldLeases()
	s.rep.Problems += s.problems
	s.rep.PastHead = len(s.pastHead)
	meta := map[string][]byte{}
	for k, v := range s.meta {
		meta[k] = v
	}
	meta[string(metaStoreID)] = []byte(s.rep.StoreID)
	meta[string(metaFormat)] = []byte(strconv.Itoa(LogFormat))
	meta[string(metaHead)] = u64(s.rep.Head)
	if err := s.segmentsMeta(meta); err != nil {
		return err
	}
	delete(meta, string(metaSalvageLost))
	if len(s.rep.Lost) > 0 {
		meta[string(metaSalvageLost)] = []byte(s.rep.Lost.String())
	}
	return s.out.finish(meta, streams, leases)
}

// oldStreams reads the source's stream versions that are readable.
func (s *salvage) oldStreams() map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range s.w.keyValues(s.w.rootBuckets()[string(bucketStreams)]) {
		if version, _, ok := parseHead(v); ok { // 8 or 16 bytes, or varints (format 6)
			out[k] = version
		}
	}
	return out
}

// oldLeases reads the source's lease records that decode.
func (s *salvage) oldLeases() []Lease {
	var out []Lease
	for _, v := range s.w.keyValues(s.w.rootBuckets()[string(bucketLease)]) {
		m, err := DecodeCanonical(v)
		if mm, ok := m.(map[string]any); ok && err == nil {
			if l, err := leaseFromMap(mm); err == nil {
				out = append(out, l)
			}
		}
	}
	return out
}

// verifySalvaged checks the new log as doctor and OpenLog will.
func verifySalvaged(path string) error {
	v, err := VerifyLogFile(path)
	if err != nil {
		return err
	}
	if !v.Healthy() {
		return fmt.Errorf("salvaged log fails verification: %w", v.Err())
	}
	l, err := OpenLog(path, Options{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("salvaged log does not open: %w", err)
	}
	return l.Close()
}

// publish moves the finished file to dst without replacing anything that
// appeared there meanwhile, and syncs the directory.
func publish(tmp, dst string) error {
	if err := os.Link(tmp, dst); err != nil {
		return fmt.Errorf("%w: %w", ErrSalvageTarget, err)
	}
	if err := os.Remove(tmp); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(dst))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
