package effects

import (
	"context"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// probe settles due uncertain effects from remote postconditions (I08):
// one snapshot of their tabs and the receipts tab. A receipt for the effect
// (same op, same payload hash — a hash of op, tab, anchor and values — and,
// when the entry names it, the same binding) proves the write landed; no receipt
// proves it did not (the receipt is written in the same atomic batchUpdate),
// so the effect goes back to the retry path. An unreadable sheet leaves the
// question open: the probe is rescheduled, boundedly.
func (d *Dispatcher) probe(ctx context.Context) error {
	due, err := d.cfg.Outbox.DueProbes(d.cfg.Spreadsheet, d.cfg.MaxBatch)
	if err != nil || len(due) == 0 {
		return fenced(err)
	}
	d.C.Probes.Add(int64(len(due)))
	receipts, err := d.cfg.Provider.ReadReceipts(ctx, d.cfg.Workbook, ids(due)...)
	if err != nil {
		return d.inconclusive(due)
	}
	out := make([]Settlement, len(due))
	for i, c := range due {
		out[i] = Settlement{ID: c.ID, ClaimToken: c.ClaimToken, Outcome: d.evidence(c, receipts)}
	}
	return fenced(d.cfg.Outbox.Settle(out))
}

func ids(cs []aggregates.Effect) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func (d *Dispatcher) evidence(c aggregates.Effect, receipts map[string]sheetsio.ReceiptRecord) aggregates.Outcome {
	r, ok := receipts[c.ID]
	switch {
	case !ok:
		d.C.Retried.Add(1)
		return aggregates.Outcome{Kind: aggregates.OutcomeRetry, Code: "probe_not_applied", RetryAt: d.cfg.Clock.Now(), Via: "probe"}
	case r.Binding != "" && r.Binding != c.Target.Binding || r.Op != toOp(c).Kind.String():
		// a packed entry names no binding: its payload hash covers the
		// target (op, tab, anchor, values), and the settle checks it (I09)
		d.C.Failed.Add(1)
		return aggregates.Outcome{Kind: aggregates.OutcomeFailed, Code: "receipt_target_mismatch", Terminal: true, Via: "probe"}
	}
	d.C.Applied.Add(1)
	var marked []sheetsio.MarkedCell
	if spec, ok := d.cfg.Workbook.Schema().Tab(c.Target.Tab); ok {
		marked = sheetsio.MarkedCells(spec, c.Values) // what the landed write put in place of unwritable values
	}
	return aggregates.Outcome{Kind: aggregates.OutcomeApplied, WrittenHash: r.RowHash, PayloadHash: r.PayloadHash, Via: "probe",
		Unwritable: unwritable(marked)}
}

func (d *Dispatcher) inconclusive(due []aggregates.Effect) error {
	for _, c := range due {
		wait := min(d.cfg.ProbeDelay<<min(c.Attempts, 10), d.cfg.RetryMax)
		next := d.cfg.Clock.Now().Add(wait)
		if err := d.cfg.Outbox.Reschedule(c.ID, c.ClaimToken, next, d.cfg.MaxProbes); err != nil {
			return fenced(err)
		}
	}
	return nil
}
