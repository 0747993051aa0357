package effects_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// knowingInbound knows the digest of the grid read it saw last, and
// refuses the first undecoded read it is handed (as a store whose read
// model moved meanwhile does).
type knowingInbound struct {
	recordingInbound
	known   sheetsio.BodyDigest
	refused int
	grids   []*sheetsio.GridSnapshot
}

func (k *knowingInbound) KnownGrid(uint64, []string, bool, bool) (sheetsio.BodyDigest, error) {
	return k.known, nil
}

func (k *knowingInbound) Observe(_ uint64, tabs map[string]effects.TabObservation, _ bool) (aggregates.ObserveStats, error) {
	for _, o := range tabs {
		k.grids = append(k.grids, o.Grid)
		if o.Grid.Undecoded && k.refused == 0 {
			k.refused++
			return aggregates.ObserveStats{}, effects.ErrReadUndecoded
		}
		k.known = o.Grid.Body
	}
	return aggregates.ObserveStats{}, nil
}

// A full scan tells the provider the digest the store knows: the read is
// not decoded. When the store refuses it (ErrReadUndecoded: its read
// model moved), the scan reads again, decoded, and does not fail.
func TestFullScanReadsAgainWhenTheStoreRefusesAnUndecodedRead(t *testing.T) {
	r := newRig(t)
	r.commit("LHR", airport("Heathrow", 25))
	r.pass()
	tab := layout.InputTabName("Airport")
	in := &knowingInbound{}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: r.prov, Workbook: r.wb, Inbound: in, Tabs: []string{tab},
		Clock: r.clock, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	if _, err := p.FullScan(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(in.grids) != 1 || in.grids[0].Undecoded || len(in.grids[0].Rows) != 1 || in.known.IsZero() {
		t.Fatalf("first scan observed %+v, known %x: want one decoded row and a digest", in.grids, in.known)
	}
	if _, err := p.FullScan(context.Background()); err != nil {
		t.Fatalf("scan after a refused undecoded read: %v", err)
	}
	if len(in.grids) != 3 || !in.grids[1].Undecoded || in.grids[2].Undecoded || len(in.grids[2].Rows) != 1 {
		t.Fatalf("second scan observed %+v: want an undecoded read, then a decoded one", in.grids[1:])
	}
}
