package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// adoptOutput is what adopt prints: the report, the backfill left after
// the wait, and the Sheets requests the run made.
type adoptOutput struct {
	report  engine.AdoptReport
	pending int64
	took    time.Duration // the adoption itself (read to rename)
	waited  time.Duration // then the wait for the backfill
	counter *requestCounter
	// the requests of the adoption itself (the rest: the backfill)
	adoptReads, adoptWrites int64
}

// adoptJSON is `adopt --json` (docs/cli.md "JSON output").
type adoptJSON struct {
	Tab             string         `json:"tab"`
	Entity          string         `json:"entity"`
	DryRun          bool           `json:"dry_run"`
	KeptAs          string         `json:"kept_as"`
	Renamed         bool           `json:"renamed"`
	Columns         []adoptColJSON `json:"columns"`
	Missing         []string       `json:"missing"`
	Rows            []adoptRowJSON `json:"rows"`
	Created         int            `json:"created"`
	Unchanged       int            `json:"unchanged"`
	Skipped         int            `json:"skipped"`
	Blank           int            `json:"blank"`
	Units           int            `json:"units"`
	Events          int            `json:"events"`
	Quarantined     int            `json:"quarantined"`
	Cleared         int            `json:"cleared"`
	BackfillPending *int64         `json:"backfill_pending,omitempty"`
	SheetsReads     int64          `json:"sheets_reads"`
	SheetsWrites    int64          `json:"sheets_writes"`
}

type adoptColJSON struct {
	Column string `json:"column"`
	Header string `json:"header"`
	Field  string `json:"field,omitempty"`
	How    string `json:"how"`
}

type adoptRowJSON struct {
	Row     int              `json:"row"`
	Key     string           `json:"key"`
	Outcome string           `json:"outcome"`
	Reason  string           `json:"reason,omitempty"`
	Field   string           `json:"field,omitempty"`
	Column  string           `json:"column,omitempty"`
	Detail  string           `json:"detail,omitempty"`
	Issues  []adoptIssueJSON `json:"issues,omitempty"`
}

type adoptIssueJSON struct {
	Field  string `json:"field"`
	Column string `json:"column"`
	Reason string `json:"reason"`
}

func (o adoptOutput) print(cmd *cobra.Command, f adoptFlags) error {
	if f.asJSON {
		return printJSON(cmd.OutOrStdout(), o.json(f))
	}
	return o.human(cmd.OutOrStdout(), f)
}

func (o adoptOutput) json(f adoptFlags) adoptJSON {
	r := o.report
	j := adoptJSON{Tab: r.Tab, Entity: r.Entity, DryRun: r.DryRun, KeptAs: r.KeptAs, Renamed: r.Renamed, Missing: append([]string{}, r.Missing...),
		Created: r.Created, Unchanged: r.Unchanged, Skipped: r.Skipped, Blank: r.Blank, Units: r.Units, Events: r.Events,
		Quarantined: r.Quarantined, Cleared: r.Cleared, SheetsReads: o.counter.reads.Load(), SheetsWrites: o.counter.writes.Load(),
		Columns: []adoptColJSON{}, Rows: []adoptRowJSON{}}
	if !r.DryRun && f.wait > 0 {
		j.BackfillPending = &o.pending
	}
	for _, c := range r.Columns {
		j.Columns = append(j.Columns, adoptColJSON{Column: c.Letter, Header: echo.Name(c.Header), Field: c.Field, How: c.How})
	}
	for _, d := range r.Rows {
		j.Rows = append(j.Rows, adoptRowJSON{Row: d.SheetRow, Key: d.Key, Outcome: string(d.Outcome), Reason: d.Reason, Field: d.Field,
			Column: d.Column, Detail: d.Detail, Issues: issuesJSON(d.Issues)})
	}
	return j
}

func issuesJSON(in []aggregates.AdoptIssue) []adoptIssueJSON {
	var out []adoptIssueJSON
	for _, is := range in {
		out = append(out, adoptIssueJSON(is))
	}
	return out
}

// human prints the columns, every row, the totals and what was done.
func (o adoptOutput) human(w io.Writer, f adoptFlags) error {
	r := o.report
	title := fmt.Sprintf("adopt tab %s into %s", echo.Quote(r.Tab), echo.Name(r.Entity))
	if r.DryRun {
		title += " (dry run: nothing written)"
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "column\theader\tfield\thow")
	for _, c := range r.Columns {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Letter, echo.Quote(c.Header), orDash(c.Field), c.How)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Missing) > 0 {
		fmt.Fprintf(w, "fields no column holds (zero value, or null): %s\n", strings.Join(r.Missing, ", "))
	}
	if err := o.rows(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d rows: %d %s, %d unchanged (in the store already), %d not adopted, %d blank\n", len(r.Rows)+r.Blank,
		r.Created, map[bool]string{true: "to create", false: "created"}[r.DryRun], r.Unchanged, r.Skipped, r.Blank)
	return o.done(w, f)
}

// rows prints one line per data row.
func (o adoptOutput) rows(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "row\tkey\toutcome\treason\tfield\tcolumn\tdetail")
	for _, d := range o.report.Rows {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", d.SheetRow, echo.Quote(d.Key), d.Outcome, orDash(d.Reason), orDash(d.Field), orDash(d.Column),
			issues(d))
	}
	return tw.Flush()
}

// issues is a skipped row's detail and the other cells that did not decode.
func issues(d aggregates.AdoptDecision) string {
	var parts []string
	if d.Detail != "" {
		parts = append(parts, d.Detail)
	}
	for i, is := range d.Issues {
		if i > 0 || is.Reason != d.Reason || is.Field != d.Field {
			parts = append(parts, fmt.Sprintf("%s %s (%s)", is.Field, is.Reason, is.Column))
		}
	}
	return strings.Join(parts, "; ")
}

// done says what the run did (or would do) with the tab.
func (o adoptOutput) done(w io.Writer, f adoptFlags) error {
	r := o.report
	if r.DryRun {
		_, err := fmt.Fprintf(w, "the tab would be kept as %s; sheets requests: %d reads, %d writes\n", echo.Quote(r.KeptAs),
			o.counter.reads.Load(), o.counter.writes.Load())
		return err
	}
	fmt.Fprintf(w, "committed %d records in %d units (%d events); quarantined %d rows, cleared %d (hikoutei quarantine list --dir %s --tab %s); took %s\n",
		r.Created, r.Units, r.Events, r.Quarantined, r.Cleared, shellWord(f.dir), escapeControls(shellWord(r.KeptAs)), o.took.Round(time.Millisecond))
	if r.Renamed {
		fmt.Fprintf(w, "kept the tab as %s\n", echo.Quote(r.KeptAs))
	}
	switch {
	case f.wait == 0:
		fmt.Fprintln(w, "System and Input tabs: filled by hikoutei serve (not waited for)")
	case o.pending == 0:
		fmt.Fprintf(w, "System and Input tabs: filled (outbox drained in %s)\n", o.waited.Round(time.Millisecond))
	default:
		fmt.Fprintf(w, "System and Input tabs: %d effects still pending after %s: hikoutei serve --dir %s finishes them (hikoutei status shows why)\n",
			o.pending, o.waited.Round(time.Millisecond), shellWord(f.dir))
	}
	reads, writes := o.counter.reads.Load(), o.counter.writes.Load()
	_, err := fmt.Fprintf(w, "sheets requests: %d reads, %d writes (the adoption %d and %d, the backfill %d and %d)\n", reads, writes,
		o.adoptReads, o.adoptWrites, reads-o.adoptReads, writes-o.adoptWrites)
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
