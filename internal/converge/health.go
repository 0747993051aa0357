package converge

import (
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// noteHealth samples sync health while the sheet differs from canonical
// state after damage stopped (at stopped). A divergence is unknown until
// an anti-entropy pass has read the tabs after the damage: the first pass
// that reports every row tab after stopped may have started before it,
// so only a pass reporting after that first one certainly read the
// damaged sheet. From then on a healthy answer is a problem (a divergence
// health hides); before, it is counted as unknown. No wall-clock bound:
// a slow machine only delays the passes.
func (r *runner) noteHealth(stopped time.Time) {
	h := r.s.Health()
	if syncReportsDivergence(h) {
		r.c.res.HealthLoud++
		return
	}
	seen := oldestTabReconcile(h.SyncHealth)
	switch {
	case r.firstPass.IsZero() || !seen.After(r.firstPass):
		if r.firstPass.IsZero() && seen.After(stopped) {
			r.firstPass = seen
		}
		r.c.res.HealthUnknown++
	default:
		r.c.res.HealthSilent++
		if !r.silent {
			r.silent = true
			r.c.problem(&r.c.res.SilentRuns, r.run, "health said ok %s after damage stopped, after a full reconciliation, while the sheet differed",
				time.Since(stopped).Round(time.Millisecond))
		}
	}
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

// syncReportsDivergence: sync health is not ok (behind — corrections
// queued —, diverged or blocked).
func syncReportsDivergence(h hikoutei.Health) bool {
	return h.SyncHealth != nil && h.SyncHealth.State != hikoutei.SyncOK
}
