// Package retention decides when a running store seals its older records
// (Options.Retention): a pure decision over the log's state and `now`,
// never the wall clock.
package retention

import "time"

// DefaultMinBatch is the fewest records a seal moves when it is asked
// for a minimum of 0 (MinBatch): fewer wait for the next check, so that
// segments are not tiny.
const DefaultMinBatch = 10_000

// MinBatch is the fewest records one seal moves when asked for at least
// n: n, or DefaultMinBatch for 0. Zero has this one meaning wherever a
// minimum batch is given (Policy.MinBatch, the root package's
// Retention.MinBatch and SealOptions.MinBatch, `hikoutei seal
// --min-batch`, `serve --retain-min-batch`); 1 lets any number go.
func MinBatch(n uint64) uint64 {
	if n == 0 {
		return DefaultMinBatch
	}
	return n
}

// Enough reports whether a seal moving the records first..last (none
// when last < first) moves at least MinBatch(n) of them: the one decision
// of "enough records to seal", for the background seal (Policy.Point)
// and Store.Seal alike.
func Enough(first, last, n uint64) bool {
	return last >= first && last-first >= MinBatch(n)-1
}

// Policy says which records the running store seals. A record is sealed
// once every rule that is set lets it go: it is older than MaxAge (by its
// commit time, on the store's clock), it is not one of the newest
// KeepRecords, and the newest snapshot covers it (BelowSnapshot). No rule
// set: the store never seals.
type Policy struct {
	MaxAge        time.Duration
	KeepRecords   uint64
	BelowSnapshot bool
	MinBatch      uint64 // the fewest records a seal moves (MinBatch: 0 is DefaultMinBatch)
}

// On reports whether any rule is set.
func (p Policy) On() bool { return p.MaxAge > 0 || p.KeepRecords > 0 || p.BelowSnapshot }

// Batch is the fewest records one seal moves.
func (p Policy) Batch() uint64 { return MinBatch(p.MinBatch) }

// Cutoff is the commit time before which a record is old enough to seal
// at now (the zero time when MaxAge is not set: every record is).
func (p Policy) Cutoff(now time.Time) time.Time {
	if p.MaxAge <= 0 {
		return time.Time{}
	}
	return now.Add(-p.MaxAge)
}

// State is what the decision reads of the log.
type State struct {
	Unsealed uint64 // the first sequence no segment holds (1: none sealed)
	Head     uint64 // the log's last sequence
	Applied  uint64 // the read model's checkpoint: later records stay
	Snapshot uint64 // the newest snapshot's sequence (0: none)
	// Young is the first sequence committed at or after Cutoff(now)
	// (Head+1 when none is): read only with MaxAge set.
	Young uint64
}

// Point is the retention point: the first sequence the store keeps in
// log.db once a seal moves every record below it, or 0 when no batch is
// due (a rule keeps everything, or fewer than Batch records may go).
func (p Policy) Point(s State) uint64 {
	if !p.On() {
		return 0
	}
	below := min(s.Head, s.Applied) + 1
	if p.MaxAge > 0 {
		below = min(below, s.Young)
	}
	if p.KeepRecords > 0 {
		if s.Head < p.KeepRecords {
			return 0
		}
		below = min(below, s.Head-p.KeepRecords+1)
	}
	if p.BelowSnapshot {
		below = min(below, s.Snapshot+1)
	}
	if below <= s.Unsealed || !Enough(s.Unsealed, below-1, p.MinBatch) {
		return 0
	}
	return below
}
