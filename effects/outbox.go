// Package effects holds the sync workers: the outbox dispatcher (claim →
// dispatch → settle), the prober of uncertain deliveries and the
// reconciliation scanner. They reach the store only through the Outbox
// contract, so they can run against the real store or an in-memory one.
package effects

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Claimed is an effect claimed for one dispatch, with everything needed to
// build its row operation and to settle it.
type Claimed struct {
	ID          string
	Tab         string // logical tab
	Anchor      string
	Binding     string
	Op          string         // aggregates.OpAppend | OpUpdate | OpDelete
	Values      map[string]any // column → canonical value (append: full row; update: changed cells)
	PayloadHash string
	ClaimToken  string
	// ExpectedHash is the full-row visible hash the write is guarded by
	// (I06): the hash after the binding's last applied effect, or the
	// evidence recorded by reconciliation for a correction.
	ExpectedHash string
	StreamSeq    uint64
	Attempts     int64 // claims of this effect so far, this one included
}

// Settlement is the outcome of one claimed effect.
type Settlement struct {
	ID         string
	ClaimToken string
	Outcome    aggregates.Outcome
}

// Outbox is the store side of the workers: every method is a fenced,
// durable decision taken by the store's single writer. Implementations: the
// root package's Store (real) and MemOutbox (in-memory), which share the
// conformance suite in effects/outboxtest.
type Outbox interface {
	// Now is the store clock.
	Now() time.Time
	// Fence is the writer identity carried on every remote mutation (I05).
	Fence() sheetsio.Fence
	// Renew renews the writer lease; it runs before every remote mutation
	// and an error means this writer is displaced (I04).
	Renew() error
	// Claim claims up to max claimable heads of spreadsheet (I07).
	Claim(spreadsheet string, max int) ([]Claimed, error)
	// DueProbes returns up to max delivery_uncertain effects whose probe is
	// due (I08); only these may be probed.
	DueProbes(spreadsheet string, max int) ([]Claimed, error)
	// Settle records outcomes atomically; claims that are no longer current
	// are rejected (aggregates.ErrStaleClaim), a lost lease fails it all.
	Settle(s []Settlement) error
	// Reschedule records an inconclusive probe and its next due time; after
	// maxProbes the effect fails terminally (delivery_uncertain_timeout).
	Reschedule(id, token string, next time.Time, maxProbes int64) error
	// RecoverProcessing turns effects left in processing by a previous run
	// (claimed, maybe sent) into delivery_uncertain due at probeAt.
	RecoverProcessing(spreadsheet string, probeAt time.Time) (int, error)
	// RecordDivergence records that dispatching to spreadsheet stopped
	// because the spreadsheet's authority no longer names this writer
	// (seed 002 divergence check); status and doctor surface it.
	RecordDivergence(spreadsheet, reason string) error
	// QueueUnsynced queues rows for up to max entities the spreadsheet was
	// never told about (committed while sync was off); it returns how many.
	QueueUnsynced(spreadsheet string, max int) (int, error)
	// SupersedeTerminal supersedes up to max terminal failed heads of
	// spreadsheet, each in the same commit as its replacement effect (I10).
	SupersedeTerminal(spreadsheet string, max int) (int, error)
}
