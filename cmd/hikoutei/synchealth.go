package main

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/observe"
)

// syncHealthJSON is a spreadsheet's sync health as /healthz and
// `status --json` show it (never the spreadsheet id): one shape, package
// observe's.
type syncHealthJSON = observe.SyncHealthReport

// syncHealthOf is h, read by the engine from a closed store or over the
// administrative channel, as /healthz and `status --json` show it.
func syncHealthOf(h *engine.SyncHealth) *syncHealthJSON {
	return observe.SyncReport(publicSyncHealth(h))
}

// publicSyncHealth is h in the root package's terms.
func publicSyncHealth(h *engine.SyncHealth) *hikoutei.SyncHealth {
	p := &hikoutei.SyncHealth{Spreadsheet: h.Spreadsheet, State: hikoutei.SyncState(h.State), Reason: hikoutei.SyncReason(h.Reason),
		Pending: h.Pending, OldestPending: h.OldestPending, Diverged: h.Diverged, LastReconcile: h.LastReconcile,
		DivergedBound: h.DivergedBound}
	for _, t := range h.Tabs {
		p.Tabs = append(p.Tabs, hikoutei.TabHealth{Tab: t.Tab, State: hikoutei.SyncState(t.State), Reason: hikoutei.SyncReason(t.Reason),
			Pending: t.Pending, OldestPending: t.OldestPending, Diverged: t.Diverged, DivergedSince: t.DivergedSince,
			LastReconcile: t.LastReconcile, OverBound: t.OverBound, Codes: t.Codes, Retired: t.Retired, Notice: hikoutei.SyncReason(t.Notice)})
	}
	for _, w := range h.Warnings {
		p.Warnings = append(p.Warnings, hikoutei.SyncWarning{Reason: hikoutei.SyncReason(w.Reason), Detail: w.Detail, Since: w.Since, At: w.At})
	}
	if c := h.Capacity; c != nil {
		p.Capacity = &hikoutei.SpreadsheetCapacity{Cells: c.Cells, Limit: c.Limit, At: c.At, GrowthKnown: c.GrowthKnown, PerDay: c.PerDay,
			FullAt: c.FullAt, Since: c.Since}
	}
	return p
}

// printSyncHealth writes one spreadsheet's health (its warnings, e.g.
// spreadsheet_capacity, under it) as a table, one line per tab.
func printSyncHealth(out io.Writer, h syncHealthJSON) error {
	fmt.Fprintf(out, "\nsync %s: %s\n", shown(h.Spreadsheet), describeState(h.State, h.Reason, h.Pending, h.OldestPendingSeconds, h.DivergedRows))
	for _, w := range h.Warnings {
		fmt.Fprintf(out, "warning %s: %s\n", w.Reason, w.Detail)
	}
	if len(h.Tabs) == 0 {
		_, err := fmt.Fprintln(out, "no tab to show (no effect waits or failed)")
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TAB\tSTATE\tREASON\tPENDING\tOLDEST PENDING\tDIVERGED\tLAST RECONCILE")
	for _, t := range h.Tabs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", shown(t.Tab), t.State, dash(cmp.Or(t.Reason, t.Notice)), t.Pending, age(t.OldestPendingSeconds),
			t.DivergedRows, stamp(t.LastReconcile))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range h.Tabs {
		if len(t.Retired) > 0 {
			fmt.Fprintf(out, "%s keeps retired columns after its anchor (people's values never imported; copy them where they belong, then delete the column): %s\n",
				t.Tab, strings.Join(t.Retired, ", "))
		}
	}
	return nil
}

func describeState(state, reason string, pending int64, oldest float64, diverged int) string {
	switch state {
	case string(hikoutei.SyncBlocked):
		return "blocked (" + reason + ")"
	case string(hikoutei.SyncBehind):
		return fmt.Sprintf("behind (%d pending, oldest %s)", pending, age(oldest))
	case string(hikoutei.SyncDiverged):
		return fmt.Sprintf("diverged (%d rows differ)", diverged)
	case string(hikoutei.SyncMigrating):
		return "migrating (a tab follows the entities' new shape)"
	}
	return state
}

func age(seconds float64) string {
	if seconds <= 0 {
		return "-"
	}
	return (time.Duration(seconds * float64(time.Second))).Round(time.Second).String()
}

func stamp(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
