package effects_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Which tabs a woken poll reads: the named ones among the Input tabs, or
// every tab (nil) when a wake named nothing or a sheet that is none of
// them.
func TestNamedTabs(t *testing.T) {
	tabs := []string{"A_Input", "B_Input", "C_Input"}
	ids := map[string]int64{"A_Input": 10, "B_Input": 20, "C_Input": 30, "Sync_Conflicts": 40}
	cases := []struct {
		name  string
		tabs  []string
		named []int64
		want  []string
	}{
		{"nothing named: every tab", tabs, nil, nil},
		{"one tab", tabs, []int64{20}, []string{"B_Input"}},
		{"two tabs, sorted", tabs, []int64{30, 10}, []string{"A_Input", "C_Input"}},
		{"the same tab twice", tabs, []int64{20, 20}, []string{"B_Input"}},
		{"Sync_Conflicts: every tab", tabs, []int64{20, 40}, nil},
		{"an unknown sheet: every tab", tabs, []int64{99}, nil},
		{"a tab waiting for its migration: every tab", []string{"A_Input", "C_Input"}, []int64{20}, nil},
		{"a tab not bound yet: every tab", append(slices.Clone(tabs), "D_Input"), []int64{50}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := effects.NamedTabs(c.tabs, ids, c.named); !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
				t.Fatalf("NamedTabs(%v) = %v, want %v", c.named, got, c.want)
			}
		})
	}
}

// recordingInbound expects nothing and keeps what it was asked to observe.
type recordingInbound struct {
	quietInbound
	obs  map[string]effects.TabObservation
	full bool
}

func (r *recordingInbound) Observe(_ uint64, tabs map[string]effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	r.obs, r.full = tabs, full
	return aggregates.ObserveStats{}, nil
}

// A poll of the tab a wake named is ONE read request, the tab read whole
// with grid data by its sheetId (no enumeration of the tabs, no values
// read first), observed as an escalated poll's tabs are.
func TestPollNamedReadsTheNamedTabInOneRequest(t *testing.T) {
	r := newRig(t)
	r.commit("LHR", airport("Heathrow", 25))
	r.pass()
	tab := layout.InputTabName("Airport")
	in := &recordingInbound{}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: r.prov, Workbook: r.wb, Inbound: in, Tabs: []string{tab},
		Clock: r.clock, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	before := r.emu.Counters(sheetID)
	if _, err := p.PollNamed(context.Background(), []string{tab}); err != nil {
		t.Fatal(err)
	}
	after := r.emu.Counters(sheetID)
	if reads, writes := after.Reads-before.Reads, after.Writes-before.Writes; reads != 1 || writes != 0 {
		t.Fatalf("a named poll cost %d reads and %d writes, want 1 and 0", reads, writes)
	}
	g := in.obs[tab].Grid
	if in.full || g == nil || g.Err != nil || g.Partial || len(g.Rows) != 1 || in.obs[tab].Expect == nil {
		t.Fatalf("observed full=%v %+v", in.full, in.obs[tab])
	}
}

// expectingInbound expects rows rows in every tab (anchors the sheet
// does not show), so a values read cannot certify them.
type expectingInbound struct {
	recordingInbound
	rows int
}

func (e *expectingInbound) Expectations(tabs []string) (map[string]aggregates.TabExpectation, uint64, error) {
	exp := make(map[string]aggregates.TabExpectation, len(tabs))
	for _, t := range tabs {
		x := aggregates.TabExpectation{Rows: make(map[string]string, e.rows)}
		for i := range e.rows {
			x.Rows[fmt.Sprintf("anchor-%d", i)] = "hash"
		}
		exp[t] = x
	}
	return exp, 0, nil
}

// A woken poll never reads a large tab whole with grid data: past
// NamedWholeRows expected rows it takes the adaptive reads, a values read
// first and then a grid read of what that could not certify.
func TestPollNamedOfALargeTabReadsWhatChangedNotTheWholeTab(t *testing.T) {
	r := newRig(t)
	r.commit("LHR", airport("Heathrow", 25))
	r.pass()
	tab := layout.InputTabName("Airport")
	in := &expectingInbound{rows: 3}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: r.prov, Workbook: r.wb, Inbound: in, Tabs: []string{tab},
		Clock: r.clock, Logger: slog.New(slog.DiscardHandler), NamedWholeRows: 2})
	must(t, err)
	before := r.emu.Counters(sheetID)
	if _, err := p.PollNamed(context.Background(), []string{tab}); err != nil {
		t.Fatal(err)
	}
	after := r.emu.Counters(sheetID)
	if reads := after.Reads - before.Reads; reads != 2 {
		t.Fatalf("a named poll of a tab over the limit cost %d reads, want 2 (values, then grid)", reads)
	}
	if _, ok := in.obs[tab]; !ok || in.full {
		t.Fatalf("observed full=%v %+v", in.full, in.obs)
	}
}

// cleaningInbound is recordingInbound that finds nothing to clean up.
type cleaningInbound struct{ recordingInbound }

func (*cleaningInbound) Cleanup(uint64, map[string]*sheetsio.GridSnapshot) (int, error) {
	return 0, nil
}

// A safety full scan and a cleanup read the Input tabs whole with grid
// data in ONE request by sheetId (no enumeration of the tabs first: two
// reads of the quota the dispatcher's passes wait on), a tab a person
// renamed included.
func TestFullScanAndCleanupReadByIDInOneRequest(t *testing.T) {
	r := newRig(t)
	r.commit("LHR", airport("Heathrow", 25))
	r.pass()
	tab := layout.InputTabName("Airport")
	must(t, r.emu.Person(sheetID).RenameTab(tab, "Airports (mine)"))
	in := &cleaningInbound{}
	p, err := effects.NewPoller(effects.PollerConfig{Provider: r.prov, Workbook: r.wb, Inbound: in, Tabs: []string{tab},
		Clock: r.clock, Logger: slog.New(slog.DiscardHandler)})
	must(t, err)
	for name, scan := range map[string]func() error{
		"full scan": func() error { _, err := p.FullScan(context.Background()); return err },
		"cleanup":   func() error { _, err := p.Cleanup(context.Background()); return err },
		"both":      func() error { _, _, err := p.ScanAndCleanup(context.Background()); return err },
	} {
		in.obs = nil
		before := r.emu.Counters(sheetID)
		must(t, scan())
		after := r.emu.Counters(sheetID)
		if reads, writes := after.Reads-before.Reads, after.Writes-before.Writes; reads != 1 || writes != 0 {
			t.Fatalf("%s cost %d reads and %d writes, want 1 and 0", name, reads, writes)
		}
		if name == "cleanup" {
			continue // observes nothing
		}
		if g := in.obs[tab].Grid; !in.full || g == nil || g.Err != nil || g.Partial || len(g.Rows) != 1 {
			t.Fatalf("%s observed full=%v %+v", name, in.full, in.obs[tab])
		}
	}
}
