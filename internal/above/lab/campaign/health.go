package campaign

import (
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Verdict is what one sample of sync health said while the sheet differed
// from canonical state after the last act.
type Verdict int

// Verdicts.
const (
	// Loud: sync health reported it (not ok: behind, migrating, diverged
	// or blocked).
	Loud Verdict = iota
	// Unknown: it said ok before a reconciliation could have read the
	// sheet as the last act left it.
	Unknown
	// Silent: it said ok after one had (a divergence health hides).
	Silent
)

// Quiet judges sync health while the sheet differs from canonical state
// after the last act (Stopped). A divergence is unknown until an
// anti-entropy pass has read the tabs after the last act: the first pass
// that reports every row tab after Stopped may have started before it,
// so only a pass reporting after that first one certainly read the sheet
// the last act left. From then on a healthy answer is Silent; before, it
// is Unknown. No wall-clock bound: a slow machine only delays the passes.
type Quiet struct {
	Stopped   time.Time
	firstPass time.Time // when the first pass after Stopped reported every row tab (zero: not yet)
	lastPass  time.Time // the newest such report seen
	passes    int       // reports after Stopped seen so far
}

// PassesToConverge is how many reconciliation passes over every row tab
// must have reported after the last act before a sheet still differing
// counts as diverged: the first may have begun before the act, the second
// certainly read the sheet it left and queued the repairs, and the third
// comes one period after their dispatch. It holds the campaigns' "within
// two reconciliation periods" to the store's own passes, so a busy host
// that slows the passes does not fail a run whose store kept its word.
const PassesToConverge = 3

// Judge judges one sample, and counts the reconciliation passes it shows.
func (q *Quiet) Judge(h hikoutei.Health) Verdict {
	seen := oldestTabReconcile(h.SyncHealth)
	q.count(seen)
	if h.SyncHealth != nil && h.SyncHealth.State != hikoutei.SyncOK {
		return Loud
	}
	if q.firstPass.IsZero() || !seen.After(q.firstPass) {
		if q.firstPass.IsZero() && seen.After(q.Stopped) {
			q.firstPass = seen
		}
		return Unknown
	}
	return Silent
}

// count counts a pass when the oldest row tab's last reconcile moved past
// Stopped and past the one seen before. Passes that report between two
// samples count as one, so a slow sampler only lengthens the wait.
func (q *Quiet) count(seen time.Time) {
	if seen.After(q.Stopped) && seen.After(q.lastPass) {
		q.lastPass = seen
		q.passes++
	}
}

// Passes is how many reconciliation passes over every row tab Judge has
// seen report after Stopped.
func (q *Quiet) Passes() int { return q.passes }

// Late reports whether a sheet that still differs after took counts as
// diverged: past the wall-clock bound and after PassesToConverge passes.
func (q *Quiet) Late(took, bound time.Duration) bool {
	return took > bound && q.passes >= PassesToConverge
}

// oldestTabReconcile is the earliest last-reconcile time over the row tabs
// (zero when one has none yet).
func oldestTabReconcile(h *hikoutei.SyncHealth) time.Time {
	var oldest time.Time
	if h == nil || len(h.Tabs) == 0 {
		return oldest
	}
	for i, t := range h.Tabs {
		if i == 0 || t.LastReconcile.Before(oldest) {
			oldest = t.LastReconcile
		}
	}
	return oldest
}
