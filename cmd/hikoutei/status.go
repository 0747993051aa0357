package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// storeStatus is what `hikoutei status` reports.
type storeStatus struct {
	Dir          string           `json:"dir"`
	Running      bool             `json:"running"`
	Holder       string           `json:"holder,omitempty"`
	Operation    string           `json:"operation,omitempty"`
	LeaseEpoch   int64            `json:"lease_epoch"`
	LeaseState   string           `json:"lease_state"`
	LogHead      *uint64          `json:"log_head,omitempty"` // absent while a writer holds log.db
	Checkpoint   uint64           `json:"checkpoint"`
	Outbox       map[string]int64 `json:"outbox"`
	OpenConflict int64            `json:"open_conflicts"`
	Quarantined  int64            `json:"quarantined"`
	// LastEvidence is the log sequence of the newest inbound evidence (what
	// the pollers last recorded: an accepted edit, a quarantine, a conflict).
	LastEvidence int64  `json:"last_inbound_evidence_seq"`
	Divergence   string `json:"divergence,omitempty"` // sync stopped: the sheet's authority names another writer
	// MisdirectedWrites counts updates whose cells landed on another row
	// (C06, sync.write_misdirected); MisdirectedCells the cells they
	// overwrote, whose earlier content may have been an unpolled edit
	// (`hikoutei audit` names them).
	MisdirectedWrites int64 `json:"misdirected_writes"`
	MisdirectedCells  int64 `json:"misdirected_cells"`
	// LogGaps are the records the log lost, as recorded when the store
	// found its read model ahead of the log.
	LogGaps string `json:"log_gaps,omitempty"`
}

func newStatusCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status --dir DIR [--json]",
		Short: "Show lease holder and epoch, log head, checkpoint, outbox by state, conflicts, quarantine, last inbound evidence",
		Long: `status reads a store without changing it. It works while the store runs:
the read model is read through SQLite's WAL, the holder from lease.toml. The log
head is shown only when no process holds log.db (while one does, the
checkpoint equals the head after every commit).`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireDir(dir); err != nil {
				return err
			}
			st, err := readStatus(dir)
			if err != nil {
				return err
			}
			return printStatus(cmd, st, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func readStatus(dir string) (storeStatus, error) {
	st := storeStatus{Dir: dir, Outbox: map[string]int64{}}
	if lf, err := events.ReadLeaseFile(dir); err == nil {
		st.Running, st.Holder, st.Operation = true, lf.Holder.String(), lf.Operation
	} else if !errors.Is(err, fs.ErrNotExist) {
		st.Holder = "lease.toml invalid: run hikoutei doctor"
	}
	head, err := readLogHead(dir)
	switch {
	case err == nil:
		st.LogHead = &head
	case !errors.Is(err, events.ErrStoreLocked):
		return st, err // no usable log: nothing to report as running or healthy
	}
	conn, err := readModel(dir)
	if err != nil {
		return st, err
	}
	defer conn.Close()
	st.Checkpoint, _ = strconv.ParseUint(text(conn, "SELECT value FROM hk_meta WHERE key = 'checkpoint'"), 10, 64)
	st.LeaseEpoch = scalar(conn, "SELECT epoch FROM hk_lease WHERE role = 'writer'")
	st.LeaseState = text(conn, "SELECT state FROM hk_lease WHERE role = 'writer'")
	st.OpenConflict = scalar(conn, "SELECT count(*) FROM hk_conflicts WHERE state = 'open'")
	st.Quarantined = scalar(conn, "SELECT count(*) FROM hk_quarantine WHERE active = 1")
	st.LastEvidence = scalar(conn, "SELECT coalesce(max(seq), 0) FROM hk_evidence")
	misdirected := "FROM hk_evidence WHERE kind = '" + string(events.TypeSyncWriteMisdirected) + "'"
	st.MisdirectedWrites = scalar(conn, "SELECT count(DISTINCT seq) "+misdirected)
	st.MisdirectedCells = scalar(conn, "SELECT count(*) "+misdirected)
	st.Divergence = text(conn, "SELECT group_concat(substr(key, 12) || ': ' || value, '; ') FROM hk_meta WHERE key LIKE 'divergence:%'")
	st.LogGaps = text(conn, "SELECT group_concat('at seq ' || substr(key, 9) || ': ' || value, '; ') FROM hk_meta WHERE key LIKE 'log_gap:%'")
	err = sqlitex.Execute(conn, "SELECT state, count(*) FROM hk_outbox GROUP BY state", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { st.Outbox[s.ColumnText(0)] = s.ColumnInt64(1); return nil }})
	return st, err
}

// readLogHead reads the log head (events.ErrStoreLocked while a writer holds
// log.db).
func readLogHead(dir string) (uint64, error) {
	if err := engine.IsStore(dir); err != nil {
		return 0, err
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, OpenTimeout: 200e6})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Head()
}

func printStatus(cmd *cobra.Command, st storeStatus, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(st)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	holder := "none (store closed)"
	if st.Running {
		holder = fmt.Sprintf("%s, operation %q", st.Holder, st.Operation)
	}
	head := "(held by the writer)"
	if st.LogHead != nil {
		head = strconv.FormatUint(*st.LogHead, 10)
	}
	fmt.Fprintf(tw, "holder\t%s\nlease\tepoch %d %s\nlog head\t%s\ncheckpoint\t%d\n", holder, st.LeaseEpoch, st.LeaseState, head, st.Checkpoint)
	states := make([]string, 0, len(st.Outbox))
	for s := range st.Outbox {
		states = append(states, s)
	}
	sort.Strings(states)
	for _, s := range states {
		fmt.Fprintf(tw, "outbox %s\t%d\n", s, st.Outbox[s])
	}
	fmt.Fprintf(tw, "open conflicts\t%d\nquarantined\t%d\nlast inbound evidence\tseq %d\n", st.OpenConflict, st.Quarantined, st.LastEvidence)
	if st.Divergence != "" {
		fmt.Fprintf(tw, "SYNC DIVERGED\t%s\n", st.Divergence)
	}
	if st.MisdirectedWrites > 0 {
		fmt.Fprintf(tw, "misdirected writes\t%d (cells overwritten: %d; hikoutei audit names them)\n", st.MisdirectedWrites, st.MisdirectedCells)
	}
	if st.LogGaps != "" {
		fmt.Fprintf(tw, "LOG LOST RECORDS\t%s\n", st.LogGaps)
	}
	return tw.Flush()
}
