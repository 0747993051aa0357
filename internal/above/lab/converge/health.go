package converge

import (
	"time"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
)

// noteHealth samples sync health while the sheet differs from canonical
// state after damage stopped (campaign.Quiet): a healthy answer after a
// pass that certainly read the damaged sheet is a problem (counted once
// per run); before it, the sample is counted as unknown.
func (r *runner) noteHealth() {
	switch r.quiet.Judge(r.s.Health()) {
	case campaign.Loud:
		r.c.res.HealthLoud++
	case campaign.Unknown:
		r.c.res.HealthUnknown++
	default:
		r.c.res.HealthSilent++
		if !r.silent {
			r.silent = true
			r.c.problem(&r.c.res.SilentRuns, r.run, "health said ok %s after damage stopped, after a full reconciliation, while the sheet differed",
				time.Since(r.quiet.Stopped).Round(time.Millisecond))
		}
	}
}
