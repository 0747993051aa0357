package hikoutei

import (
	"context"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// ChainHash is a value of the log's SHA-256 hash chain (see
// docs/events.md, "The hash chain").
type ChainHash [32]byte

// String is the hash in lowercase hex.
func (h ChainHash) String() string { return events.ChainHash(h).String() }

// IsZero reports whether h is the zero value (no hash).
func (h ChainHash) IsZero() bool { return h == ChainHash{} }

// ChainPin is a chain head a third party recorded: the chain value after
// record Seq.
type ChainPin struct {
	Seq  uint64
	Hash ChainHash
}

// String gives the SEQ:HASH form `hikoutei audit verify --pin` reads.
func (p ChainPin) String() string {
	return events.ChainPin{Seq: p.Seq, Hash: events.ChainHash(p.Hash)}.String()
}

// VerifyReport is the result of a verification: the head sequence and
// hash, the records walked, the first chained record and the holes a
// salvage left (where the chain restarts).
type VerifyReport struct {
	StoreID string
	Genesis ChainHash // the chain's value before the first record
	// Head is the last record verified; HeadHash is the chain value after
	// it, the value a third party pins.
	Head     uint64
	HeadHash ChainHash
	Records  uint64 // records walked
	// FirstChained is the first record that carries a link; 0 when the
	// log has none yet (all written before the chain).
	FirstChained uint64
	// Restarts lists the holes a salvage left, where the chain restarts
	// (with AcceptSalvageHoles).
	Restarts []events.ChainRestart
	Pinned   bool // a pin was given and the log extends it
	// Segments is how many sealed segments the walk read; Stray names
	// what the segment location holds that no seal of this log vouches
	// for (ignored by every reader).
	Segments int
	Stray    []string
}

// verifyReportOf is r in the root's terms (nil for nil).
func verifyReportOf(r *events.ChainReport, err error) (*VerifyReport, error) {
	if r == nil {
		return nil, err
	}
	return &VerifyReport{StoreID: r.StoreID, Genesis: ChainHash(r.Genesis), Head: r.Head, HeadHash: ChainHash(r.HeadHash),
		Records: r.Records, FirstChained: r.FirstChained, Restarts: r.Restarts, Pinned: r.Pinned,
		Segments: r.Segments, Stray: r.Stray}, err
}

// VerifyOptions configures Verify and VerifyDir.
type VerifyOptions struct {
	// Pin, when set, must be extended by the log: its chain value at
	// Pin.Seq must be Pin.Hash (ErrChainPinMismatch otherwise).
	Pin *ChainPin
	// Progress, when set, is called as the walk goes with the records
	// walked and the log's head.
	Progress func(done, total uint64)
	// AcceptSalvageHoles accepts a log whose chain restarts after holes a
	// salvage left: the report lists each hole (Restarts) and the
	// verification succeeds. Without it such a log fails with
	// ErrChainRestarted, because no link ties the records after a hole to
	// the genesis value; a head pinned after the last hole that the log
	// still extends is what vouches for them.
	AcceptSalvageHoles bool
	// Segments is where the store's sealed segments live, for VerifyDir
	// (nil: its segments folder; open a URL with segstore.Open). Verify
	// reads through the store's own (Options.Segments).
	Segments segstore.Store
}

func (o VerifyOptions) chain() events.ChainVerifyOptions {
	var pin *events.ChainPin
	if o.Pin != nil {
		pin = &events.ChainPin{Seq: o.Pin.Seq, Hash: events.ChainHash(o.Pin.Hash)}
	}
	return events.ChainVerifyOptions{Pin: pin, Progress: o.Progress, AcceptSalvageHoles: o.AcceptSalvageHoles}
}

// Verify walks the whole hash chain of the store's log, from the genesis
// value of its store id, and returns the head sequence and hash. It
// reports the first record that is not what the chain committed to
// (changed, removed, reordered, torn) as *events.ChainBrokenError naming
// its sequence (ErrChainBroken), a pin the log does not extend as
// ErrChainPinMismatch, and a chain that restarts after a salvage's hole
// as *events.ChainRestartedError (ErrChainRestarted) unless
// opts.AcceptSalvageHoles (the report then still lists what verified). Commits go on meanwhile (the walk reads in short
// transactions up to the head it finds). Errors: those, ErrStoreClosed,
// ctx's.
func (s *Store) Verify(ctx context.Context, opts VerifyOptions) (*VerifyReport, error) {
	return verifyReportOf(s.e.VerifyChain(ctx, opts.chain()))
}

// ChainHead returns the store's current chain head (the last record's
// sequence and the chain value after it), the value a third party pins
// and `hikoutei audit verify --pin` checks. Errors: ErrStoreClosed, a
// torn last record's.
func (s *Store) ChainHead() (ChainPin, error) {
	p, err := s.e.ChainHead()
	return ChainPin{Seq: p.Seq, Hash: ChainHash(p.Hash)}, err
}

// VerifyDir is Verify of the store in dir, opened read-only (nothing is
// written; no lease is taken). Errors: ErrNotAStore; ErrStoreLocked
// while another process holds the store (`hikoutei audit verify` then
// verifies a copy the running process writes); Verify's.
func VerifyDir(ctx context.Context, dir string, opts VerifyOptions) (*VerifyReport, error) {
	return verifyReportOf(engine.VerifyChainDir(ctx, dir, opts.Segments, opts.chain()))
}
