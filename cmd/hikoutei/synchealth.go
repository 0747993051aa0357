package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// syncHealthJSON is a spreadsheet's sync health as /healthz and
// `status --json` show it (never the spreadsheet id).
type syncHealthJSON struct {
	Spreadsheet          string          `json:"spreadsheet"` // the sync target's key
	State                string          `json:"state"`
	Reason               string          `json:"reason,omitempty"`
	Pending              int64           `json:"pending"`
	OldestPendingSeconds float64         `json:"oldest_pending_seconds"`
	DivergedRows         int             `json:"diverged_rows"`
	LastReconcile        *time.Time      `json:"last_reconcile,omitempty"`
	DivergedBoundSeconds float64         `json:"diverged_bound_seconds,omitempty"`
	Tabs                 []tabHealthJSON `json:"tabs"`
}

type tabHealthJSON struct {
	Tab                  string     `json:"tab"`
	State                string     `json:"state"`
	Reason               string     `json:"reason,omitempty"`
	Pending              int64      `json:"pending"`
	OldestPendingSeconds float64    `json:"oldest_pending_seconds"`
	DivergedRows         int        `json:"diverged_rows"`
	DivergedSince        *time.Time `json:"diverged_since,omitempty"`
	LastReconcile        *time.Time `json:"last_reconcile,omitempty"`
	DivergedOverBound    bool       `json:"diverged_over_bound,omitempty"`
}

func syncHealthOf(h *hikoutei.SyncHealth) *syncHealthJSON {
	if h == nil {
		return nil
	}
	out := &syncHealthJSON{Spreadsheet: h.Spreadsheet, State: string(h.State), Reason: string(h.Reason), Pending: h.Pending,
		OldestPendingSeconds: h.OldestPending.Seconds(), DivergedRows: h.Diverged, LastReconcile: timeOrNil(h.LastReconcile),
		DivergedBoundSeconds: h.DivergedBound.Seconds(), Tabs: []tabHealthJSON{}}
	for _, t := range h.Tabs {
		out.Tabs = append(out.Tabs, tabHealthJSON{Tab: t.Tab, State: string(t.State), Reason: string(t.Reason), Pending: t.Pending,
			OldestPendingSeconds: t.OldestPending.Seconds(), DivergedRows: t.Diverged, DivergedSince: timeOrNil(t.DivergedSince),
			LastReconcile: timeOrNil(t.LastReconcile), DivergedOverBound: t.OverBound})
	}
	return out
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// printSyncHealth writes one spreadsheet's health as a table, one line
// per tab.
func printSyncHealth(out io.Writer, h syncHealthJSON) error {
	fmt.Fprintf(out, "\nsync %s: %s\n", h.Spreadsheet, describeState(h.State, h.Reason, h.Pending, h.OldestPendingSeconds, h.DivergedRows))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TAB\tSTATE\tREASON\tPENDING\tOLDEST PENDING\tDIVERGED\tLAST RECONCILE")
	for _, t := range h.Tabs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", t.Tab, t.State, dash(t.Reason), t.Pending, age(t.OldestPendingSeconds),
			t.DivergedRows, stamp(t.LastReconcile))
	}
	return tw.Flush()
}

func describeState(state, reason string, pending int64, oldest float64, diverged int) string {
	switch state {
	case string(hikoutei.SyncBlocked):
		return "blocked (" + reason + ")"
	case string(hikoutei.SyncBehind):
		return fmt.Sprintf("behind (%d pending, oldest %s)", pending, age(oldest))
	case string(hikoutei.SyncDiverged):
		return fmt.Sprintf("diverged (%d rows differ)", diverged)
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

// healthStatus is /healthz's HTTP status: 503 when the store cannot
// commit (a fenced replicated primary included), when sync is blocked,
// or when a tab stayed diverged longer than the bound; 200 otherwise
// (behind included, and a replicated store's standby, which serves
// reads).
func healthStatus(h hikoutei.Health) int {
	if errors.Is(h.Local, hikoutei.ErrStandby) {
		return 200
	}
	if h.Local != nil || h.SyncHealth.Failing() {
		return 503
	}
	return 200
}
