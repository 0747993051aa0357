package campaign

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/sheetcheck"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// State is the spreadsheet compared with canonical state at one instant.
type State struct {
	Reports    map[string]sheetcheck.Report // by tab
	Open       int                          // open conflicts
	Review     int                          // Input orphans left for review
	Quarantine map[string]int               // active quarantine records by reason
	Excused    int                          // rows that differ, excused by a conflict, quarantine or the caller
	Blocked    string                       // why tabs could not be compared (blocked, missing, empty)
	BlockedTab map[string]bool              // those tabs
	Drifted    []string                     // tabs blocked by header drift
	Differ     int                          // rows that differ, not excused
	Snapshot   error                        // the spreadsheet could not be read
}

// Canonical reports every tab equal to canonical state (excused rows
// aside).
func (st State) Canonical() bool { return st.Blocked == "" && st.Snapshot == nil && st.Differ == 0 }

func (st State) String() string {
	switch {
	case st.Snapshot != nil:
		return "sheet unreadable: " + st.Snapshot.Error()
	case st.Blocked != "":
		return st.Blocked
	}
	var b strings.Builder
	for _, tab := range slices.Sorted(func(yield func(string) bool) {
		for t := range st.Reports {
			if !yield(t) {
				return
			}
		}
	}) {
		if r := st.Reports[tab]; !r.Clean() {
			fmt.Fprintf(&b, "%s: missing %v duplicated %v drifted %v orphans %v; ", tab, r.Missing, r.Duplicated, r.Drifted, r.Orphans)
		}
	}
	return b.String()
}

// Want is canonical state: entity → anchor → the record's field values
// by field name (the key included), as the application reads them.
type Want map[string]map[string]map[string]any

// Target is what a comparison reads: the store (canonical state, its
// conflicts, quarantine and outbox) and the client that reads its
// spreadsheet.
type Target struct {
	Store    *hikoutei.Store
	Provider *gsheets.Provider
}

// EntityTabs are the System and Input tabs of entities, in order.
func EntityTabs(entities ...string) []string {
	var out []string
	for _, e := range entities {
		out = append(out, layout.SystemTabName(e), layout.InputTabName(e))
	}
	return out
}

// Compare reads the tabs of entities (one read of the spreadsheet), then
// canonical state (want), and compares each tab it could read with it
// (sheetcheck; the others are named in Blocked):
// rows under an open conflict or active quarantine, and rows extra
// excuses, are counted as excused; Input rows of removed records whose
// delete settled as a conflict are left for review (I21) and counted.
// extra may be nil.
func (t Target) Compare(ctx context.Context, entities []string, want func(context.Context) (Want, error), extra func(tab, anchor string) Excuse) (State, error) {
	var st State
	_, _, wb := engine.Of(t.Store).Workers()
	if wb == nil {
		st.Blocked = "not provisioned yet"
		return st, nil
	}
	tabs := EntityTabs(entities...)
	snaps, err := t.Provider.Snapshot(ctx, wb, tabs...)
	if err != nil {
		st.Snapshot = err
		return st, nil
	}
	st.BlockedTab = map[string]bool{}
	for _, tab := range tabs {
		if s := snaps[tab]; s.Err != nil || s.Empty {
			st.Blocked += fmt.Sprintf("%s blocked or empty (%v); ", tab, s.Err)
			st.BlockedTab[tab] = true
			if errors.Is(s.Err, sheetsio.ErrHeaderDrift) {
				st.Drifted = append(st.Drifted, tab)
			}
		}
	}
	w, err := want(ctx)
	if err != nil {
		return st, err
	}
	ex, err := ReadExcuses(ctx, t.Store)
	if err != nil {
		return st, err
	}
	st.Open, st.Quarantine = ex.Open, ex.Quarantine
	st.Reports = map[string]sheetcheck.Report{}
	for i, tab := range tabs {
		if st.BlockedTab[tab] {
			continue
		}
		if err := t.compareTab(&st, snaps[tab], wb, w[entities[i/2]], ex, extra); err != nil {
			return st, err
		}
	}
	return st, nil
}

func (t Target) compareTab(st *State, snap *sheetsio.TabSnapshot, wb *sheetsio.Workbook, want map[string]map[string]any, ex Excuses, extra func(tab, anchor string) Excuse) error {
	spec, _ := wb.Schema().Tab(snap.Tab)
	rep, err := sheetcheck.Tab(snap, spec, want, ex.For(snap.Tab, extra))
	if err != nil {
		return err
	}
	if spec.Role == layout.RoleInput {
		if rep.Orphans, err = t.forReview(snap.Tab, rep.Orphans, st, ex); err != nil {
			return err
		}
	}
	st.Reports[snap.Tab] = rep
	st.Differ += rep.Differences()
	st.Excused += len(rep.Excused)
	return nil
}

// forReview drops the Input orphans left for review (I21): the row
// carried a person's data, so its delete settled as a conflict, or the
// poll recorded it as active evidence (an orphan row whose delete was
// never sent: its entity was removed from the declaration meanwhile).
func (t Target) forReview(tab string, orphans []string, st *State, ex Excuses) ([]string, error) {
	var out []string
	for _, id := range orphans {
		op, state, err := sheetcheck.LastEffect(t.Store.ReadModelPath(), engine.Of(t.Store).Target(), tab, id)
		if err != nil {
			return nil, err
		}
		if (op == "delete" && state == "conflict") || ex.Rows[tab+"/"+id] != ExcusedNot {
			st.Review++
			continue
		}
		out = append(out, id)
	}
	return out, nil
}
