package gsheets

import (
	"context"

	"golang.org/x/time/rate"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

var (
	_ sheetsio.QuotaReporter = (*Provider)(nil)
	_ sheetsio.ReadPacer     = (*Provider)(nil)
	_ sheetsio.KnownRows     = (*Provider)(nil)
	_ sheetsio.BlindAppends  = (*Provider)(nil)
)

// AwaitRead blocks until a read of normal priority could start now on
// the account of the pool the next read would take (next: it takes no
// turn), the reserve for urgent reads left (sheetsio.ReadPacer).
func (p *Provider) AwaitRead(ctx context.Context) error {
	return p.pool.next(classRead, p.cfg.Now()).a.read.Ready(ctx)
}

// AwaitWrite blocks until a write could start now on the account of the
// pool the next write would take (it takes no token; sheetsio.KnownRows).
func (p *Provider) AwaitWrite(ctx context.Context) error {
	return p.pool.next(classWrite, p.cfg.Now()).a.write.Ready(ctx)
}

// QuotaBudget reports the provider's read and write budgets: their
// current rates, ceilings and the 429s seen (sheetsio.QuotaReporter),
// summed over the accounts in the pool, and each account's in Accounts.
func (p *Provider) QuotaBudget() sheetsio.QuotaBudget {
	var q sheetsio.QuotaBudget
	for _, a := range p.pool.accts {
		ab := a.quotaBudget()
		q.Accounts = append(q.Accounts, ab)
		q.ReadThrottled += ab.ReadThrottled
		q.WriteThrottled += ab.WriteThrottled
		if ab.Out != "" {
			continue
		}
		q.ReadRate += ab.ReadRate
		q.WriteRate += ab.WriteRate
		q.ReadCeiling += ab.ReadCeiling
		q.WriteCeiling += ab.WriteCeiling
	}
	return q
}

// quotaBudget is the account's budgets.
func (a *account) quotaBudget() sheetsio.AccountBudget {
	rs, rc := a.read.Snapshot()
	ws, wc := a.write.Snapshot()
	ab := sheetsio.AccountBudget{Index: a.index, ReadRate: perSecond(rs.Limit), WriteRate: perSecond(ws.Limit),
		ReadCeiling: perSecond(rc), WriteCeiling: perSecond(wc), ReadThrottled: rs.Throttled, WriteThrottled: ws.Throttled}
	if o := a.out.Load(); o != nil {
		ab.Out, ab.OutSince = o.code, o.at
	}
	return ab
}

// Headroom is how many reads and writes could both start now without
// waiting, over the accounts in the pool (sheetsio.QuotaReporter).
func (p *Provider) Headroom() int {
	return min(p.headroom(classRead), p.headroom(classWrite))
}

// headroom is how many requests of class could start now without
// waiting, over the accounts in the pool.
func (p *Provider) headroom(class requestClass) int {
	n := 0
	for _, a := range p.pool.accts {
		if a.out.Load() != nil {
			continue
		}
		b := a.read
		if class == classWrite {
			b = a.write
		}
		n = addSat(n, b.Headroom())
	}
	return n
}

// addSat is a+b for non-negative ints, saturating at the largest int
// (an unpaced budget's headroom).
func addSat(a, b int) int {
	if s := a + b; s >= a {
		return s
	}
	return int(^uint(0) >> 1)
}

// perSecond is l in requests a second, 0 for unpaced.
func perSecond(l rate.Limit) float64 {
	if l == rate.Inf {
		return 0
	}
	return float64(l)
}
