package hikoutei

import (
	"time"

	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/retention"
)

// DefaultRetentionMinBatch is the fewest records a seal moves when its
// minimum is 0: Retention.MinBatch and SealOptions.MinBatch alike (1
// moves any number).
const DefaultRetentionMinBatch = retention.DefaultMinBatch

// Retention is a running store's retention policy (Options.Retention): it
// seals the log's older records into segment files in the background, as
// Store.Seal does, when a batch is due (docs/operations.md "Automatic
// retention"). A record is sealed once every rule that is set lets it go:
//
//   - MaxAge: it was committed more than MaxAge ago, by the store's clock
//     (Options.Clock) and the time the record carries;
//   - KeepRecords: it is not one of the newest KeepRecords records;
//   - BelowSnapshot: the newest snapshot the store keeps covers it (its
//     sequence is at most the snapshot's).
//
// No rule set (the zero value): the store never seals by itself. A seal
// waits until at least MinBatch records may go (0: DefaultRetentionMinBatch,
// as for SealOptions.MinBatch: both decide with one rule), so that
// segments are not tiny. The store checks as records are appended
// (every quarter of MinBatch) and once at Open. Records the read model has
// not applied, and those of the streams a store reads when it opens, stay
// in log.db. A replicated primary runs it (its standbys seal what it
// seals); a standby does not: Health().RetentionStatus says not_running. A failed seal shows in
// Health().Retention (retention_failing) and the metrics; commits go on.
type Retention struct {
	MaxAge        time.Duration
	KeepRecords   uint64
	BelowSnapshot bool
	MinBatch      uint64
}

// RetentionState is what the background sealing does.
type RetentionState string

// Retention states (RetentionHealth.State).
const (
	RetentionOff        = RetentionState(engine.RetentionOff)        // no policy: the store never seals by itself
	RetentionOn         = RetentionState(engine.RetentionOn)         // the policy runs; its last seal (if any) succeeded
	RetentionFailing    = RetentionState(engine.RetentionFailing)    // the last seal failed (Health().Retention says why)
	RetentionNotRunning = RetentionState(engine.RetentionNotRunning) // a policy is set but this store does not seal (Reason)
)

// RetentionHealth is the background sealing's state and its counters
// since the store opened (times on the store's clock).
type RetentionHealth struct {
	State    RetentionState
	Reason   string // why a set policy does not run (not_running)
	Seals    uint64 // background seals that committed
	Failures uint64 // background seals that failed
	// LastSealAt is when the last one committed; SealedBelow is its
	// retention point (the first sequence log.db keeps).
	LastSealAt  time.Time
	SealedBelow uint64
	// FailingSince is the first failure of the current run of failures
	// (zero unless failing).
	FailingSince time.Time
}

// policy is r as the engine's policy.
func (r Retention) policy() retention.Policy {
	return retention.Policy{MaxAge: r.MaxAge, KeepRecords: r.KeepRecords, BelowSnapshot: r.BelowSnapshot, MinBatch: r.MinBatch}
}

// retentionHealth maps the engine's status into h.
func retentionHealth(s engine.RetentionStatus, h *Health) {
	h.Retention = s.Err
	h.RetentionStatus = &RetentionHealth{State: RetentionState(s.State), Reason: s.Reason, Seals: s.Seals, Failures: s.Failures,
		LastSealAt: s.LastSealAt, SealedBelow: s.SealedBelow, FailingSince: s.FailingSince}
}
