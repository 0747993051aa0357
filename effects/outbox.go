// Package effects holds the sync workers: the outbox dispatcher (claim →
// dispatch → settle), the prober of uncertain deliveries and the
// reconciliation scanner, and the Input poller. They reach the store only
// through the Outbox and Inbound contracts, so they run against the real
// engine (internal/engine) or the in-memory MemOutbox alike: both pass the
// conformance suite in effects/outboxtest.
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package effects

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Settlement is the outcome of one claimed effect.
type Settlement struct {
	ID         string
	ClaimToken string
	Outcome    aggregates.Outcome
}

// Outbox is the store side of the workers: every method is a fenced,
// durable decision taken by the store's single writer. Implementations: the
// engine (internal/engine, real) and MemOutbox (in-memory), which share the
// conformance suite in effects/outboxtest. A claimed effect is an
// aggregates.Effect whose ClaimToken is the claim's and whose ExpectedHash
// is the full-row hash its write is guarded by (I06).
type Outbox interface {
	// Now is the store clock.
	Now() time.Time
	// Fence is the writer identity carried on every remote mutation (I05).
	Fence() sheetsio.Fence
	// Renew renews the writer lease; it runs before every remote mutation
	// and an error means this writer is displaced (I04).
	Renew() error
	// Claim claims up to max claimable heads of spreadsheet (I07).
	Claim(spreadsheet string, max int) ([]aggregates.Effect, error)
	// DueProbes returns up to max delivery_uncertain effects whose probe is
	// due (I08); only these may be probed.
	DueProbes(spreadsheet string, max int) ([]aggregates.Effect, error)
	// Settle records the outcomes of current claims in one fenced commit;
	// the settlements of claims that are no longer current are skipped and
	// reported (aggregates.ErrStaleClaim); a lost lease fails it all.
	Settle(s []Settlement) error
	// Reschedule records an inconclusive probe and its next due time; after
	// maxProbes the effect fails terminally (delivery_uncertain_timeout).
	Reschedule(id, token string, next time.Time, maxProbes int64) error
	// RecoverProcessing turns effects left in processing by a previous run
	// (claimed, maybe sent) into delivery_uncertain due at probeAt.
	RecoverProcessing(spreadsheet string, probeAt time.Time) (int, error)
	// RecordDivergence records that dispatching to spreadsheet stopped
	// because the spreadsheet's authority no longer names this writer
	// (the authority divergence check, I05); status and doctor surface it.
	RecordDivergence(spreadsheet, reason string) error
	// QueueUnsynced queues up to max rows the spreadsheet was never told
	// about — each row tab of each entity on its own (committed while sync
	// was off, or before a switch of spreadsheet); it returns how many.
	QueueUnsynced(spreadsheet string, max int) (int, error)
	// SupersedeTerminal supersedes up to max terminal failed heads of
	// spreadsheet, each in the same commit as its replacement effect (I10).
	SupersedeTerminal(spreadsheet string, max int) (int, error)
	// RepairBase is the read model's checkpoint now: an anti-entropy pass
	// takes it before it reads the spreadsheet, as the base of that read.
	RepairBase() (uint64, error)
	// Repair compares one tab as an anti-entropy pass read it, at
	// checkpoint base (RepairBase), with what the store says the tab
	// shows and queues, in one fenced commit, the corrections
	// aggregates.DecideRepair decides (I28); it reports the tab's
	// divergent rows. A row the store wrote after base (the read may
	// predate that write) is left for a later pass, as a row in flight.
	Repair(spreadsheet string, base uint64, seen aggregates.SeenTab) (aggregates.RepairReport, error)
}
