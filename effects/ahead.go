package effects

import (
	"context"
	"errors"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// A batch of new rows sent while a write of new rows is out.
//
// The run loop sends one batch a pass and claims the next as its write
// returns (claimAhead), so rows committed while a long write is out wait
// for it to return, then for their claim, then for their own write. When
// a pipelined pass's write of new rows has been out for AheadAfter and
// the quota budget holds two more requests (a batch of new rows goes out
// as two bodies while it does, gsheets' bodies), the loop claims what is
// claimable then and, if that is new rows too, sends it at once beside
// the write still out: at most one such batch a pass. Both batches settle
// together, after both answered.
//
// Only first sends of new rows go out so (OpAppend, FirstSend, no cell
// notes, a provider that appends blind, sheetsio.BlindAppends): Sheets
// puts an appended row after the tab's last row when it applies the
// body, so two writes of new rows applied in either order neither
// overwrite each other nor move a row either addresses (as two bodies of
// one pass, gsheets' wave.go). No row gets two writers and a row's
// effects keep their order (I07): the claim sees the batch still out as
// processing, so it takes no effect of a row that batch writes, and no
// later effect of a row in either batch is claimable until both settled.
// A batch claimed so that is not new rows only, or claimed as the write
// answered, is kept for the next pass, as a prefetched one. A crash after the claim leaves both batches
// processing, as a crash after claimAhead does; RecoverProcessing finds
// them.

// DefaultAheadAfter is Config.AheadAfter's default: about two of
// Google's per-request latencies, so a write of a few hundred rows is
// back before a second batch is claimed beside it.
const DefaultAheadAfter = 300 * time.Millisecond

// aheadPoll is how often a pass whose write is out asks whether to send
// a batch beside it (aheadNow).
const aheadPoll = 20 * time.Millisecond

// aheadNow decides whether a pass sends a second batch beside its write:
// the write has been out for at least after (a non-positive after: never)
// and the quota budget lets two requests start now.
func aheadNow(out, after time.Duration, headroom int) bool {
	return after > 0 && out >= after && headroom >= 2
}

// newRows reports whether every claimed effect is the first send of a new
// row (toOp's FirstSend).
func newRows(claimed []aggregates.Effect) bool {
	for _, c := range claimed {
		if c.Op != events.OpAppend || c.Attempts > 1 || c.StreamSeq > 1 {
			return false
		}
	}
	return len(claimed) > 0
}

// blindRows reports whether claimed (with notes) may go out beside
// another batch of new rows: new rows only, no notes, and a provider
// that appends them without a read.
func (d *Dispatcher) blindRows(claimed []aggregates.Effect, notes noteWork) bool {
	ba, ok := d.cfg.Provider.(sheetsio.BlindAppends)
	return ok && len(notes.notes) == 0 && len(notes.sweep) == 0 && newRows(claimed) &&
		ba.AppendsKnown(d.cfg.Workbook, d.cfg.Outbox.Fence())
}

// sent is a dispatch's settlements and error (dispatch's results).
type sent struct {
	out []Settlement
	err error
}

// dispatchBeside is dispatch; in a pipelined pass, while a write of new
// rows is out, it may send a second batch of new rows beside it (see
// above). It returns the effects sent (claimed, then the second batch's)
// and their settlements, in that order.
func (d *Dispatcher) dispatchBeside(ctx context.Context, claimed []aggregates.Effect, notes noteWork, pipelined bool) ([]aggregates.Effect, []Settlement, error) {
	if !pipelined || d.cfg.AheadAfter <= 0 || d.next != nil || !d.blindRows(claimed, notes) {
		out, err := d.dispatch(ctx, claimed, notes)
		return claimed, out, err
	}
	first := make(chan sent, 1)
	go func() {
		out, err := d.dispatch(ctx, claimed, notes)
		first <- sent{out, err}
	}()
	beside, second := d.awaitBeside(ctx, first)
	r := <-first
	if second == nil {
		return claimed, r.out, r.err
	}
	s := <-second
	all := append(append([]aggregates.Effect(nil), claimed...), beside...)
	return all, append(r.out, s.out...), errors.Join(r.err, s.err)
}

// awaitBeside waits until the first write answered, and meanwhile sends
// at most one batch beside it when aheadNow says so. It returns that
// batch and the channel of its result (nil: none sent).
func (d *Dispatcher) awaitBeside(ctx context.Context, first chan sent) ([]aggregates.Effect, chan sent) {
	start := time.Now() // the write's time out is the network's, not the store clock's
	t := time.NewTicker(aheadPoll)
	defer t.Stop()
	for {
		select {
		case r := <-first:
			first <- r // for the caller
			return nil, nil
		case <-t.C:
		}
		if !aheadNow(time.Since(start), d.cfg.AheadAfter, d.headroom()) {
			continue
		}
		beside := d.claimBeside()
		if len(beside) == 0 || answered(first) {
			d.hold(beside) // the write is back: the next pass sends it, as claimAhead's
			return nil, nil
		}
		d.C.Claimed.Add(int64(len(beside)))
		second := make(chan sent, 1)
		go func() {
			out, err := d.sendBeside(ctx, beside)
			second <- sent{out, err}
		}()
		return beside, second
	}
}

// claimBeside renews the lease (I04) and claims the batch to send beside
// the write that is out. A batch that is not new rows only is kept for
// the next pass (as prefetched). A failure claims nothing: the next pass
// meets it again in its own renewal and claim.
func (d *Dispatcher) claimBeside() []aggregates.Effect {
	if err := d.cfg.Outbox.Renew(); err != nil {
		return nil
	}
	c, err := d.cfg.Outbox.Claim(d.cfg.Spreadsheet, d.batchSize())
	if err != nil || len(c) == 0 {
		return nil
	}
	failpoint.Inject(failpoint.DispatchAfterClaimAhead)
	if !d.blindRows(c, noteWork{}) {
		d.hold(c)
		return nil
	}
	return c
}

// hold keeps claimed (if any) for the next pass, as a prefetched batch.
func (d *Dispatcher) hold(claimed []aggregates.Effect) {
	if len(claimed) == 0 {
		return
	}
	ch := make(chan claimResult, 1)
	ch <- claimResult{claimed: claimed}
	d.next = ch
}

// answered reports whether the first write answered (its result stays
// in first).
func answered(first chan sent) bool {
	select {
	case r := <-first:
		first <- r
		return true
	default:
		return false
	}
}

// sendBeside sends claimed, new rows only, as one fenced batch (no cell
// notes, no chain head, no authority refresh: those ride in the pass's
// own batch) and returns their settlements; the error is the batch's
// when it wrote nothing (its effects go back on the retry path).
func (d *Dispatcher) sendBeside(ctx context.Context, claimed []aggregates.Effect) (out []Settlement, err error) {
	ctx, span := startSpan(ctx, d.cfg.Tracer, SpanDispatch)
	defer func() { endDispatch(span, len(claimed), out, err) }()
	d.C.Dispatches.Add(1)
	fence := d.cfg.Outbox.Fence()
	b := sheetsio.Batch{Fence: &fence, Ops: toOps(claimed), BeforeWrite: d.cfg.WriteGuard}
	res, err := d.cfg.Provider.Dispatch(ctx, d.cfg.Workbook, b)
	if err != nil {
		return d.failedSettlements(claimed, err), err
	}
	out = make([]Settlement, len(claimed))
	for i, c := range claimed {
		out[i] = Settlement{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: d.outcome(c, res.Ops[i])}
	}
	failpoint.Inject(failpoint.DispatchAfterRemoteApply)
	return out, nil
}
