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
}

// Judge judges one sample.
func (q *Quiet) Judge(h hikoutei.Health) Verdict {
	if h.SyncHealth != nil && h.SyncHealth.State != hikoutei.SyncOK {
		return Loud
	}
	seen := oldestTabReconcile(h.SyncHealth)
	if q.firstPass.IsZero() || !seen.After(q.firstPass) {
		if q.firstPass.IsZero() && seen.After(q.Stopped) {
			q.firstPass = seen
		}
		return Unknown
	}
	return Silent
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
