package gsheets

import (
	"context"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

var _ sheetsio.LaneDispatcher = (*Provider)(nil)

// DispatchLanes sends a pass's lanes (sheetsio.LaneDispatcher): the lanes
// that need a preflight (all but blind appends) are read together, in one
// preflight of their union (Dispatch's step 1: one read request, two when
// an append finds its anchor in a partially read tab), then each lane
// plans against its own tabs of that read and sends its batchUpdate, the
// lanes in parallel. The lanes must touch disjoint tabs and share one
// fence. A failed read fails every lane that needed it, and those write
// nothing. The read is counted in the first reading lane's
// DispatchResult.Reads.
func (p *Provider) DispatchLanes(ctx context.Context, w *sheetsio.Workbook, lanes []sheetsio.Batch) []sheetsio.LaneResult {
	out := make([]sheetsio.LaneResult, len(lanes))
	if w == nil {
		for i := range out {
			out[i].Err = newErr(sheetsio.CodeInvalidBatch, nil, "nil workbook")
		}
		return out
	}
	read := p.cfg.Now()
	plans, union := p.lanePlans(w, lanes, read)
	shared, reads, err := p.sharedPreflight(ctx, w, union)
	var wg sync.WaitGroup
	for i := range lanes {
		wg.Go(func() { out[i] = p.sendLane(ctx, w, lanes[i], plans[i], shared, err, read) })
	}
	wg.Wait()
	countShared(out, plans, reads)
	return out
}

// lanePlan is how one lane plans: against a blind append's snapshots and
// check (blind), or against its part of the shared preflight.
type lanePlan struct {
	snaps map[string]*sheetsio.TabSnapshot
	check *blindCheck
	blind bool
}

// lanePlans decides which lanes append blind and returns the union of the
// others, which the shared preflight reads (nil: no lane reads).
func (p *Provider) lanePlans(w *sheetsio.Workbook, lanes []sheetsio.Batch, read time.Time) ([]lanePlan, *sheetsio.Batch) {
	plans := make([]lanePlan, len(lanes))
	var union *sheetsio.Batch
	for i, b := range lanes {
		pl := &plans[i]
		if pl.snaps, pl.check, pl.blind = p.withoutRead(w, b, read); pl.blind {
			continue
		}
		if union == nil {
			union = &sheetsio.Batch{}
		}
		union.Ops = append(union.Ops, b.Ops...)
		union.Notes = append(union.Notes, b.Notes...)
		union.SweepNotes = append(union.SweepNotes, b.SweepNotes...)
		if union.Fence == nil {
			union.Fence = b.Fence
		}
	}
	return plans, union
}

// sharedPreflight reads what union needs (nothing when nil) and returns
// the snapshots and how many read requests it took.
func (p *Provider) sharedPreflight(ctx context.Context, w *sheetsio.Workbook, union *sheetsio.Batch) (map[string]*sheetsio.TabSnapshot, int, error) {
	if union == nil {
		return nil, 0, nil
	}
	ctx, ctr := withCounter(ctx)
	snaps, err := p.preflight(ctx, w, *union)
	return snaps, int(ctr.reads.Load()), err
}

// sendLane plans and sends one lane: blind, or against its tabs of the
// shared preflight (rerr: that read failed, and the lane writes nothing).
func (p *Provider) sendLane(ctx context.Context, w *sheetsio.Workbook, b sheetsio.Batch, pl lanePlan,
	shared map[string]*sheetsio.TabSnapshot, rerr error, read time.Time) sheetsio.LaneResult {
	snaps := pl.snaps
	if !pl.blind {
		if rerr != nil {
			return sheetsio.LaneResult{Err: rerr}
		}
		snaps = laneSnaps(w, b, shared)
	}
	ctx, ctr := withCounter(ctx)
	res, err := p.sendPlanned(ctx, ctr, w, b, snaps, pl.check, read)
	return sheetsio.LaneResult{Result: res, Err: err}
}

// laneSnaps is lane b's part of a shared preflight: the tabs its own
// preflight would have read.
func laneSnaps(w *sheetsio.Workbook, b sheetsio.Batch, shared map[string]*sheetsio.TabSnapshot) map[string]*sheetsio.TabSnapshot {
	tabs, _ := preflightModes(w, b)
	out := make(map[string]*sheetsio.TabSnapshot, len(tabs))
	for _, t := range tabs {
		if s, ok := shared[t]; ok {
			out[t] = s
		}
	}
	return out
}

// countShared adds the shared read's requests to the first lane that
// needed it and got a result.
func countShared(out []sheetsio.LaneResult, plans []lanePlan, reads int) {
	for i, r := range out {
		if !plans[i].blind && r.Result != nil {
			r.Result.Reads += reads
			return
		}
	}
}
