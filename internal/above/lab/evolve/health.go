package evolve

import (
	"context"
	"strings"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// sampleHealth checks what sync health says of each row tab while the
// run goes on. Whenever a tab is ok:
//
//   - its header row, read right after, shows the declared layout (retired
//     columns after it allowed). Race-free: between the sample and the
//     read only the store's own layout migration can change the header,
//     and it only ever moves it to the declared layout — a tab that shows
//     an older one then showed it at the sample too;
//   - when the log did not move between the sample and the reads (no
//     commit, no accepted edit, no effect settled: the read model the
//     health came from is the canonical state read), the tab equals
//     canonical state, except rows under an open conflict or active
//     quarantine, rows left for review and Input rows holding a person's
//     edit the poller has not seen yet (not compared: the weaker check
//     the race allows; a sample the log moved under is counted as raced).
func (r *runner) sampleHealth(ctx context.Context) error {
	if r.s == nil {
		return nil
	}
	before, err := r.s.Stats(ctx)
	if err != nil {
		return err
	}
	ok := okTabs(r.s.Health(), r.entities())
	if len(ok) == 0 {
		return nil
	}
	r.checkHeaders(ok)
	if before.Checkpoint != before.LogHead {
		r.c.res.Raced++
		return nil
	}
	st, err := r.compare(ctx, r.pendingEdits)
	if err != nil {
		return err
	}
	after, err := r.s.Stats(ctx)
	if err != nil || after.LogHead != before.LogHead {
		r.c.res.Raced++
		return err
	}
	r.c.res.Checked++
	for _, tab := range ok {
		rep, compared := st.Reports[tab]
		switch {
		case st.BlockedTab[tab]:
			r.c.problem(&r.c.res.ContentLies, r.run, "health said %s ok while it could not be compared: %s (acts %v)", tab, st, r.lastActs())
		case compared && !rep.Clean():
			r.c.problem(&r.c.res.ContentLies, r.run, "health said %s ok while it differed from canonical state: missing %v duplicated %v drifted %v orphans %v (acts %v)%s",
				tab, rep.Missing, rep.Duplicated, rep.Drifted, rep.Orphans, r.lastActs(), r.describeRows(ctx, tab, append(append(rep.Missing, rep.Drifted...), rep.Orphans...)))
		}
	}
	return nil
}

// okTabs are the row tabs of entities whose sync health is ok.
func okTabs(h hikoutei.Health, entities []string) []string {
	if h.Sync != nil || h.SyncHealth == nil { // not provisioned, stopped, blocked or diverged: not ok
		return nil
	}
	mine := map[string]bool{}
	for _, t := range campaign.EntityTabs(entities...) {
		mine[t] = true
	}
	var out []string
	for _, t := range h.SyncHealth.Tabs {
		if t.State == hikoutei.SyncOK && mine[t.Tab] {
			out = append(out, t.Tab)
		}
	}
	return out
}

// checkHeaders: each tab health called ok shows its declared layout.
func (r *runner) checkHeaders(tabs []string) {
	_, _, wb := engine.Of(r.s).Workers()
	if wb == nil {
		return
	}
	for _, tab := range tabs {
		spec, _ := wb.Schema().Tab(tab)
		rows, err := r.who.p.Displayed(tab)
		if err != nil || len(rows) == 0 {
			r.c.problem(&r.c.res.HeaderLies, r.run, "health said %s ok while the tab was missing or empty (%v; acts %v)", tab, err, r.lastActs())
			continue
		}
		got := make([]any, len(rows[0]))
		for i, h := range rows[0] {
			got[i] = h
		}
		if _, ok := layout.MatchHeader(spec, got); !ok {
			r.c.problem(&r.c.res.HeaderLies, r.run, "health said %s ok while it showed the header %q, declared %q (acts %v)",
				tab, strings.Join(rows[0], "|"), strings.Join(spec.Headers(), "|"), r.lastActs())
		}
	}
}

// pendingEdits excuses the values of Input rows holding an edit no poll
// has seen yet.
func (r *runner) pendingEdits(tab, anchor string) campaign.Excuse {
	for _, e := range r.ed.pending {
		if e.tab == tab && e.anchor == anchor {
			return campaign.ExcusedValue
		}
	}
	return campaign.ExcusedNot
}
