package converge

// noteHealth samples sync health while the sheet differs from canonical
// state after damage stopped.
func (r *runner) noteHealth() {
	if syncReportsDivergence(r) {
		r.c.res.HealthLoud++
	} else {
		r.c.res.HealthSilent++
	}
}

// syncReportsDivergence is the campaign's view of sync health.
//
// HOOK (sync health, issue 16 item 4): this branch's Store.Health() has
// no per-spreadsheet divergence yet (Sync is non-nil only when sync has
// stopped or is not provisioned); the anti-entropy passes' findings reach
// engine.NoteReconcile, a placeholder. When sync health lands, return
// true here when Health() reports the spreadsheet (or a tab) diverged,
// behind or blocked, and count a HealthSilent sample as a problem.
func syncReportsDivergence(r *runner) bool { return r.s.Health().Sync != nil }
