package evolve

import (
	"context"
	"fmt"
	"maps"
	"reflect"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// stillConverged compares once more after convergence. A sheet that
// differs from canonical state that stood still since has diverged again;
// one that differs only in rows whose canonical state moved since has not:
// the store committed after the comparison that found it converged (its
// poll settling a person's edit the sheet already showed on a row an open
// conflict or quarantine excused), and the sheet follows that commit like
// any other, within the bound (waitConverged counts it when it does not).
// A run that never converged is reported here as before.
func (r *runner) stillConverged(ctx context.Context) error {
	st, now, err := r.compareWant(ctx, nil)
	switch {
	case err != nil || st.Canonical():
		return err
	case r.converged == nil || !movedSince(st, r.tabEntities(), r.converged, now):
		r.c.problem(&r.c.res.Diverged, r.run, "diverged again after it had converged: %s", st)
		return nil
	}
	fmt.Fprintf(r.c.out, "evolve: run %d: canonical state moved after it converged (%s); waiting for the sheet to follow\n", r.run, st)
	_, _, err = r.waitConverged(ctx)
	return err
}

// movedSince reports every row st finds differing (on a readable tab) to
// be of a record whose canonical state differs between before and now;
// tabEntity names each tab's entity. A state that could not compare
// every tab did not move.
func movedSince(st campaign.State, tabEntity map[string]string, before, now campaign.Want) bool {
	if st.Blocked != "" || st.Snapshot != nil || st.Differ == 0 {
		return false
	}
	for tab, rep := range st.Reports {
		e := tabEntity[tab]
		for _, ids := range [][]string{rep.Missing, rep.Duplicated, rep.Drifted, rep.Orphans} {
			for _, id := range ids {
				b, inBefore := before[e][id]
				n, inNow := now[e][id]
				if inBefore == inNow && reflect.DeepEqual(b, n) {
					return false
				}
			}
		}
	}
	return true
}

// tabEntities maps the declared entities' System and Input tabs to their
// entity.
func (r *runner) tabEntities() map[string]string {
	out := map[string]string{}
	for _, e := range r.entities() {
		maps.Copy(out, map[string]string{layout.SystemTabName(e): e, layout.InputTabName(e): e})
	}
	return out
}
