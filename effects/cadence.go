package effects

import "time"

// The scheduled passes that read whole tabs — the reconciliation with its
// anti-entropy read (Dispatcher), the surplus-row cleanup and the safety
// full scan (Poller), and the timer's poll of every Input tab — share the
// read quota with the dispatcher's passes. Timed from the end of their
// previous pass, they fell due together (the cleanup and the
// reconciliation every 30 s, the full scan and the poll with them every
// minute), and their reads, in one burst, held the passes' reads back for
// seconds while the commits of those passes waited in the outbox. They
// run on slots instead: each cadence at a fixed rate from its worker's
// start, whatever a pass took, and each offset within the reconciliation
// period (PhasesOf) so that they come apart.

// Phases are how long before each multiple of its own period since its
// worker started a scheduled pass runs: the reconciliation on the
// multiples, the cleanup and the full scan half a reconciliation period
// earlier (those two share one grid read when both are due), the timer's
// poll a quarter of one earlier.
type Phases struct {
	Reconcile, Poll, Cleanup time.Duration
}

// PhasesOf are the phases of the scheduled passes for a reconciliation
// period. Pure.
func PhasesOf(period time.Duration) Phases {
	return Phases{Reconcile: 0, Poll: period / 4, Cleanup: period / 2}
}

// NextSlot is the first time strictly after now of a cadence of period
// started at origin and run early by offset: origin + k·period − offset
// for a whole k, the offset taken modulo period. The first slot after
// origin is then origin + period − offset, never origin itself. A period
// of 0 or less has no slots: now. Pure.
func NextSlot(now, origin time.Time, period, offset time.Duration) time.Time {
	if period <= 0 {
		return now
	}
	base := origin.Add(-(offset % period))
	n := now.Sub(base)
	k := n / period // the slots at or before now, floored
	if n < 0 && n%period != 0 {
		k--
	}
	return base.Add((k + 1) * period)
}
