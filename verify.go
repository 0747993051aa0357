package hikoutei

import (
	"context"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// ChainHash is a value of the log's SHA-256 hash chain (see
// docs/events.md, "The hash chain").
type ChainHash = events.ChainHash

// ChainPin is a chain head a third party recorded: the chain value after
// record Seq. String gives the SEQ:HASH form `hikoutei audit verify --pin`
// reads.
type ChainPin = events.ChainPin

// VerifyReport is the result of a verification: the head sequence and
// hash, the records walked, the first chained record and the holes a
// salvage left (where the chain restarts).
type VerifyReport = events.ChainReport

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
}

func (o VerifyOptions) chain() events.ChainVerifyOptions {
	return events.ChainVerifyOptions{Pin: o.Pin, Progress: o.Progress, AcceptSalvageHoles: o.AcceptSalvageHoles}
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
	return s.e.VerifyChain(ctx, opts.chain())
}

// ChainHead returns the store's current chain head (the last record's
// sequence and the chain value after it), the value a third party pins
// and `hikoutei audit verify --pin` checks. Errors: ErrStoreClosed, a
// torn last record's.
func (s *Store) ChainHead() (ChainPin, error) {
	return s.e.ChainHead()
}

// VerifyDir is Verify of the store in dir, opened read-only (nothing is
// written; no lease is taken). Errors: ErrNotAStore; ErrStoreLocked
// while another process holds the store (`hikoutei audit verify` then
// verifies a copy the running process writes); Verify's.
func VerifyDir(ctx context.Context, dir string, opts VerifyOptions) (*VerifyReport, error) {
	return engine.VerifyChainDir(ctx, dir, opts.chain())
}
