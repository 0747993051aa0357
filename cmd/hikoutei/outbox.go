package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
)

// outboxEntryJSON is one outbox entry as `outbox list|show --json` prints
// it (field names documented in docs/cli.md "Inspecting the outbox and the
// quarantine"). It never holds the spreadsheet id; Values only with
// `show --values`.
type outboxEntryJSON struct {
	ID           string         `json:"effect_id"`
	State        string         `json:"state"`
	Reason       string         `json:"reason"`
	Terminal     bool           `json:"terminal"`
	Tab          string         `json:"tab"`
	Anchor       string         `json:"anchor"`
	Binding      string         `json:"binding"`
	Entity       string         `json:"entity"`
	EntityID     string         `json:"entity_id"`
	Op           string         `json:"op"`
	Attempts     int64          `json:"attempts"`
	Probes       int64          `json:"probes"`
	DueAt        string         `json:"due_at,omitempty"`
	StreamSeq    uint64         `json:"stream_sequence"`
	QueuedSeq    uint64         `json:"queued_seq"`
	UpdatedSeq   uint64         `json:"updated_seq"`
	SupersededBy string         `json:"superseded_by,omitempty"`
	Fields       []string       `json:"fields,omitempty"`
	Values       map[string]any `json:"values,omitempty"`
}

func outboxJSON(e projector.OutboxEntry) outboxEntryJSON {
	return outboxEntryJSON{ID: e.ID, State: string(e.State), Reason: e.Reason, Terminal: e.Terminal, Tab: e.Tab, Anchor: e.Anchor,
		Binding: e.Binding, Entity: e.Entity, EntityID: e.EntityID, Op: string(e.Op), Attempts: e.Attempts, Probes: e.Probes,
		DueAt: timeOrEmpty(e.DueAt), StreamSeq: e.StreamSeq, QueuedSeq: e.QueuedSeq, UpdatedSeq: e.UpdatedSeq,
		SupersededBy: e.SupersededBy, Fields: e.Fields}
}

func timeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// stateList is the repeatable --state flag: effect states, each one of
// aggregates.EffectStates, given repeatedly or as a comma list.
type stateList []aggregates.EffectState

func (l *stateList) String() string {
	parts := make([]string, len(*l))
	for i, s := range *l {
		parts[i] = string(s)
	}
	return strings.Join(parts, ",")
}

func (l *stateList) Type() string { return "state" }

// Allowed lists the accepted states (see cliflag.Enum).
func (*stateList) Allowed() []string {
	names := make([]string, len(aggregates.EffectStates))
	for i, s := range aggregates.EffectStates {
		names[i] = string(s)
	}
	return names
}

func (l *stateList) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		s, err := parseEffectState(strings.TrimSpace(part))
		if err != nil {
			return err
		}
		*l = append(*l, s)
	}
	return nil
}

func parseEffectState(v string) (aggregates.EffectState, error) {
	names := make([]string, len(aggregates.EffectStates))
	for i, s := range aggregates.EffectStates {
		if string(s) == v {
			return s, nil
		}
		names[i] = string(s)
	}
	return "", fmt.Errorf("unknown state %q (one of %s)", v, strings.Join(names, ", "))
}

func newOutboxCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "outbox",
		Short: "List and show the outbox: the sheet writes queued, applied, failed or blocked",
		Args:  argsUsage(cobra.NoArgs),
		RunE:  func(*cobra.Command, []string) error { return usageError{errors.New("give list or show")} },
	}
	cmd.AddCommand(newOutboxListCmd(), newOutboxShowCmd())
	return cmd
}

func newOutboxListCmd() *cobra.Command {
	var dir string
	var f projector.OutboxFilter
	var states stateList
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list --dir DIR [--state STATE]... [--reason CODE] [--tab TAB] [--limit N] [--json]",
		Short: "List outbox entries, newest first, without cell values (works while the store runs)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.Limit < 0 {
				return usageError{errors.New("--limit is 0 (no limit) or more")}
			}
			f.States = states
			conn, done, err := inspectReadModel(dir)
			if err != nil {
				return err
			}
			defer done()
			rows, total, err := projector.ListOutbox(conn, f)
			if err != nil {
				return fmt.Errorf("read the outbox: %w", err)
			}
			return printOutboxList(cmd, rows, total, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().Var(&states, "state", "only entries in STATE (repeatable, or a comma list): "+(&stateList{}).all())
	cmd.Flags().StringVar(&f.Reason, "reason", "", "only entries whose last code is CODE (e.g. sheet_header_drift)")
	cmd.Flags().StringVar(&f.Tab, "tab", "", "only entries writing to TAB (e.g. Airport_System)")
	cmd.Flags().IntVar(&f.Limit, "limit", 50, "at most N entries (0: all)")
	addJSONFlag(cmd, &asJSON, shapeLines)
	return cmd
}

// all lists every state, for the flag's help.
func (*stateList) all() string {
	l := stateList(aggregates.EffectStates)
	return l.String()
}

func newOutboxShowCmd() *cobra.Command {
	var dir string
	var asJSON, values bool
	cmd := &cobra.Command{
		Use:   "show --dir DIR EFFECT_ID [--values] [--json]",
		Short: "Show one outbox entry and the names of the fields it writes",
		Long: `show prints one outbox entry: its row, state, reason and attempts, and the
names of the cells it writes. The cell values are user data: they are printed
only with --values. A personal value (docs/erasure.md) is never printed, nor
its sealed text: it shows as ` + personalMarker + `, or as ` + hikoutei.Erased + ` when the
store is closed and its log erased the value's subject (audit
--reveal-personal reads personal values).`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			conn, done, err := inspectReadModel(dir)
			if err != nil {
				return err
			}
			defer done()
			e, vals, err := projector.InspectOutboxEntry(conn, args[0])
			if err != nil {
				return err
			}
			j := outboxJSON(e)
			if values {
				j.Values = shownOutboxValues(cmd.ErrOrStderr(), dir, e.Entity, vals)
			}
			return printOutboxShow(cmd.OutOrStdout(), j, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&values, "values", false, "also print the cell values (user data)")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func printOutboxList(cmd *cobra.Command, rows []projector.OutboxEntry, total int64, asJSON bool) error {
	w := cmd.OutOrStdout()
	if asJSON {
		out := make([]outboxEntryJSON, 0, len(rows))
		for _, r := range rows {
			out = append(out, outboxJSON(r))
		}
		if err := printJSONLines(w, out); err != nil {
			return err
		}
		return printCut(cmd.ErrOrStderr(), len(rows), total)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "EFFECT\tSTATE\tREASON\tTAB\tANCHOR\tENTITY\tOP\tATTEMPTS\tQUEUED SEQ\tDUE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", shown(r.ID), stateText(r), shown(dash(r.Reason)), shown(r.Tab), shown(r.Anchor), shown(r.Entity), r.Op,
			r.Attempts, r.QueuedSeq, dash(timeOrEmpty(r.DueAt)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printTotal(w, len(rows), total)
}

// stateText is the state, marked when a failure is terminal.
func stateText(r projector.OutboxEntry) string {
	if r.Terminal {
		return string(r.State) + " (terminal)"
	}
	return string(r.State)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// printCut says on stderr, with --json, that --limit cut a list.
func printCut(w io.Writer, shown int, total int64) error {
	if int64(shown) >= total {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d of %d shown (--limit N, or 0 for all)\n", shown, total)
	return err
}

func printTotal(w io.Writer, shown int, total int64) error {
	var err error
	if int64(shown) < total {
		_, err = fmt.Fprintf(w, "%d of %d shown (--limit N, or 0 for all)\n", shown, total)
	} else if total == 0 {
		_, err = fmt.Fprintln(w, "no entries")
	}
	return err
}

func printOutboxShow(w io.Writer, e outboxEntryJSON, asJSON bool) error {
	if asJSON {
		return printJSON(w, e)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "effect\t%s\nstate\t%s\nreason\t%s\nterminal\t%t\n", shown(e.ID), e.State, shown(dash(e.Reason)), e.Terminal)
	fmt.Fprintf(tw, "tab\t%s\nanchor\t%s\nbinding\t%s\nentity\t%s %s\nop\t%s\n", shown(e.Tab), shown(e.Anchor), shown(e.Binding), shown(e.Entity),
		shown(e.EntityID), e.Op)
	fmt.Fprintf(tw, "attempts\t%d\nprobes\t%d\ndue\t%s\n", e.Attempts, e.Probes, dash(e.DueAt))
	fmt.Fprintf(tw, "stream sequence\t%d\nqueued at seq\t%d\nlast change at seq\t%d\n", e.StreamSeq, e.QueuedSeq, e.UpdatedSeq)
	if e.SupersededBy != "" {
		fmt.Fprintf(tw, "superseded by\t%s\n", shown(e.SupersededBy))
	}
	fmt.Fprintf(tw, "fields\t%s\n", shown(dash(strings.Join(e.Fields, ", "))))
	for _, k := range e.Fields {
		if v, ok := e.Values[k]; ok {
			b, _ := json.Marshal(v) // JSON escapes control characters; shown the bidirectional ones
			fmt.Fprintf(tw, "value %s\t%s\n", shown(k), shown(string(b)))
		}
	}
	return tw.Flush()
}
