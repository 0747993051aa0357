package converge

import (
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// healthGrace is how long after damage stopped health may still say ok
// while the sheet differs: the divergence is unknown until the next
// anti-entropy pass has read the tab (one reconciliation period) and
// noted it (its reads and commit: the margin).
func (r *runner) healthGrace() time.Duration {
	return r.c.cfg.ReconcileInterval + 300*time.Millisecond
}

// noteHealth samples sync health while the sheet differs from canonical
// state, took after damage stopped: past the grace, a healthy answer is
// a problem (a divergence health hides).
func (r *runner) noteHealth(took time.Duration) {
	switch {
	case syncReportsDivergence(r.s.Health()):
		r.c.res.HealthLoud++
	case took > r.healthGrace():
		r.c.res.HealthSilent++
		if !r.silent {
			r.silent = true
			r.c.problem(&r.c.res.SilentRuns, r.run, "health said ok %s after damage stopped while the sheet differed", took.Round(time.Millisecond))
		}
	default:
		r.c.res.HealthUnknown++
	}
}

// syncReportsDivergence: sync health is not ok (behind — corrections
// queued —, diverged or blocked).
func syncReportsDivergence(h hikoutei.Health) bool {
	return h.SyncHealth != nil && h.SyncHealth.State != hikoutei.SyncOK
}
