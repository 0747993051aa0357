package gsheets

import (
	"context"

	"golang.org/x/time/rate"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

var (
	_ sheetsio.QuotaReporter = (*Provider)(nil)
	_ sheetsio.ReadPacer     = (*Provider)(nil)
)

// AwaitRead blocks until a read of normal priority could start now,
// the reserve for urgent reads left (sheetsio.ReadPacer).
func (p *Provider) AwaitRead(ctx context.Context) error { return p.readLim.Ready(ctx) }

// QuotaBudget reports the provider's read and write budgets: their
// current rates, ceilings and the 429s seen (sheetsio.QuotaReporter).
func (p *Provider) QuotaBudget() sheetsio.QuotaBudget {
	rs, rc := p.readLim.Snapshot()
	ws, wc := p.writeLim.Snapshot()
	return sheetsio.QuotaBudget{ReadRate: perSecond(rs.Limit), WriteRate: perSecond(ws.Limit),
		ReadCeiling: perSecond(rc), WriteCeiling: perSecond(wc), ReadThrottled: rs.Throttled, WriteThrottled: ws.Throttled}
}

// Headroom is how many reads and writes could both start now without
// waiting (sheetsio.QuotaReporter).
func (p *Provider) Headroom() int { return min(p.readLim.Headroom(), p.writeLim.Headroom()) }

// perSecond is l in requests a second, 0 for unpaced.
func perSecond(l rate.Limit) float64 {
	if l == rate.Inf {
		return 0
	}
	return float64(l)
}
