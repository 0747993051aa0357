package effects

import (
	stdcmp "cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// DefaultWorkers is how many batches one pass sends in parallel at most
// when Config.Workers is zero.
const DefaultWorkers = 4

// DefaultLaneLoad is Config.LaneLoad's default: the work (effects and
// cell notes) a lane of its own must carry at least. A batchUpdate costs
// one write of the per-user quota whatever it carries, and Google takes
// about as long to apply 500 rows of a few cells as to answer a request
// at all, so a smaller pass gains no time from a second lane and spends
// a write the next pass then waits for.
const DefaultLaneLoad = 500

// lane is the part of a pass's work one worker sends: the claimed effects
// and the cell notes of whole tabs, so no two lanes ever write one row,
// and every lane is a dispatch of its own, fenced by the authority tab
// within its own atomic batchUpdate.
type lane struct {
	idx   []int // the lane's effects, as indexes into the pass's claimed batch
	notes noteWork
	head  bool // the lane publishes the chain head (the first lane)
	batch sheetsio.Batch
	res   *sheetsio.DispatchResult
	err   error
}

// fanOut decides how many lanes a pass sends: at most workers, at most
// one per tab, no more than the quota budget lets start now (headroom),
// so a pass never spends requests the budget does not have (with the
// quota spent, one batch carries every tab, as before), and no more than
// one per laneLoad of the pass's work (load), so a pass of a few rows is
// one batchUpdate, however many tabs it touches: at a sustained commit
// rate, lanes of a few rows each would spend the write quota the next
// passes wait for.
func fanOut(workers, tabs, headroom, load, laneLoad int) int {
	return max(1, min(workers, tabs, headroom, load/max(laneLoad, 1)))
}

// splitTabs deals tabs out to n lanes, the heaviest first, each to the
// lane with the least load so far (ties: the lower lane, then the tab
// name, so the split is deterministic). It returns the non-empty lanes.
func splitTabs(load map[string]int, n int) [][]string {
	tabs := make([]string, 0, len(load))
	for t := range load {
		tabs = append(tabs, t)
	}
	slices.SortFunc(tabs, func(a, b string) int { return stdcmp.Or(stdcmp.Compare(load[b], load[a]), stdcmp.Compare(a, b)) })
	lanes, weight := make([][]string, n), make([]int, n)
	for _, t := range tabs {
		i := slices.Index(weight, slices.Min(weight))
		lanes[i], weight[i] = append(lanes[i], t), weight[i]+load[t]
	}
	return slices.DeleteFunc(lanes, func(l []string) bool { return len(l) == 0 })
}

// headroom is how many requests the provider's quota budget lets start
// now (unbounded for a provider that does not say).
func (d *Dispatcher) headroom() int {
	if q, ok := d.cfg.Provider.(sheetsio.QuotaReporter); ok {
		return q.Headroom()
	}
	return d.cfg.Workers
}

// fansOut reports whether the provider lets the pass go out in parallel
// lanes (sheetsio.LaneGate): near the spreadsheet's capacity, or before
// its grid was read, one batch carries every tab, so the capacity check
// sees the whole pass. ops are the pass's ops, built once (toOps): the
// lanes send the same ones.
func (d *Dispatcher) fansOut(ops []sheetsio.Op) bool {
	g, ok := d.cfg.Provider.(sheetsio.LaneGate)
	if !ok {
		return true
	}
	return g.FansOut(d.cfg.Workbook, sheetsio.Batch{Ops: ops})
}

// parts names the part of the pass each claimed effect belongs to, its
// tab, and returns each tab's load (its effects and cell notes). A tab is
// never cut: a delete moves the rows below it, so two lanes writing one
// tab could misdirect each other's writes.
func parts(claimed []aggregates.Effect, notes noteWork) ([]string, map[string]int) {
	of, load := make([]string, len(claimed)), map[string]int{}
	for i, c := range claimed {
		of[i] = c.Target.Tab
		load[of[i]]++
	}
	for _, n := range notes.notes {
		load[n.Tab]++
	}
	for _, t := range notes.sweep {
		load[t]++
	}
	return of, load
}

// lanes splits a pass's work by tab into at most fanOut lanes (ops:
// claimed's, in their order).
func (d *Dispatcher) lanes(claimed []aggregates.Effect, ops []sheetsio.Op, notes noteWork) []*lane {
	of, load := parts(claimed, notes)
	n := fanOut(d.cfg.Workers, len(load), d.headroom(), len(claimed)+len(notes.notes)+len(notes.sweep), d.cfg.LaneLoad)
	if n == 1 || !d.fansOut(ops) {
		idx := make([]int, len(claimed))
		for i := range idx {
			idx[i] = i
		}
		return []*lane{{idx: idx, notes: notes, head: true}}
	}
	return dealLanes(splitTabs(load, n), claimed, of, notes)
}

// dealLanes gives each lane the effects and the notes of its tabs.
func dealLanes(lanesParts [][]string, claimed []aggregates.Effect, of []string, notes noteWork) []*lane {
	in := map[string]*lane{}
	out := make([]*lane, len(lanesParts))
	for i, ps := range lanesParts {
		out[i] = &lane{head: i == 0}
		for _, p := range ps {
			in[p] = out[i]
		}
	}
	for i := range claimed {
		l := in[of[i]]
		l.idx = append(l.idx, i)
	}
	for _, n := range notes.notes {
		l := in[n.Tab]
		l.notes.notes = append(l.notes.notes, n)
	}
	for _, t := range notes.sweep {
		l := in[t]
		l.notes.sweep = append(l.notes.sweep, t)
	}
	return out
}

// sendLanes sends every lane's batch, in parallel when there are several;
// each lane keeps its result. A provider that reads for all the lanes at
// once (sheetsio.LaneDispatcher) gets them together: the pass then costs
// one read, not one per lane.
func (d *Dispatcher) sendLanes(ctx context.Context, lanes []*lane) {
	if len(lanes) == 1 {
		lanes[0].res, lanes[0].err = d.cfg.Provider.Dispatch(ctx, d.cfg.Workbook, lanes[0].batch)
		return
	}
	if ld, ok := d.cfg.Provider.(sheetsio.LaneDispatcher); ok {
		batches := make([]sheetsio.Batch, len(lanes))
		for i, l := range lanes {
			batches[i] = l.batch
		}
		for i, r := range ld.DispatchLanes(ctx, d.cfg.Workbook, batches) {
			lanes[i].res, lanes[i].err = r.Result, r.Err
		}
		return
	}
	var wg sync.WaitGroup
	for _, l := range lanes {
		wg.Go(func() { l.res, l.err = d.cfg.Provider.Dispatch(ctx, d.cfg.Workbook, l.batch) })
	}
	wg.Wait()
}

// lanesRead reports whether a pass's lanes read (or one failed).
func lanesRead(lanes []*lane) bool {
	for _, l := range lanes {
		if l.err != nil || l.res == nil || l.res.Reads > 0 {
			return true
		}
	}
	return false
}

// lanesErr joins the errors of the lanes that wrote nothing.
func lanesErr(lanes []*lane) error {
	var errs []error
	for _, l := range lanes {
		errs = append(errs, l.err)
	}
	return errors.Join(errs...)
}
