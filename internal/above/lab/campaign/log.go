package campaign

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/sheetcheck"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// ReadLog reads the log of the closed store in dir from its first event,
// calling fn (may be nil) with each, and returns the commit ids it holds.
func ReadLog(dir string, fn func(events.Event)) (map[string]bool, error) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer l.Close()
	commits := map[string]bool{}
	err = l.ReadFrom(1, func(e events.Event) error {
		commits[e.Commit] = true
		if fn != nil {
			fn(e)
		}
		return nil
	})
	return commits, err
}

// Duplicates lists, as "tab/anchor", each anchor tabs show twice as a
// person sees them (the anchor column, or conflict_id on
// Sync_Conflicts). A tab that cannot be read is skipped.
func Duplicates(p *emulator.Person, tabs ...string) []string {
	var out []string
	for _, tab := range tabs {
		rows, err := p.Displayed(tab)
		if err != nil {
			continue
		}
		for _, a := range sheetcheck.DuplicateAnchors(rows, layout.AnchorHeader, layout.ConflictID) {
			out = append(out, tab+"/"+a)
		}
	}
	return out
}

// Diagnose describes, from the read model, what holds back each anchor
// that differs from canonical state: its effects, quarantine, candidates
// and conflicts (for the report of a run that did not converge).
func Diagnose(readModel string, st State) string {
	conn, err := sqlite.OpenConn(readModel, sqlite.OpenReadOnly)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	var b strings.Builder
	for tab, rep := range st.Reports {
		for _, id := range append(append(append([]string(nil), rep.Missing...), rep.Drifted...), rep.Orphans...) {
			fmt.Fprintf(&b, "\n  %s %s:", tab, id)
			for _, q := range diagnosis {
				_ = sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: []any{tab, id}, ResultFunc: func(s *sqlite.Stmt) error {
					fmt.Fprintf(&b, " [%s]", s.ColumnText(0))
					return nil
				}})
			}
		}
	}
	return b.String()
}

var diagnosis = []string{
	`SELECT 'effect ' || stream_sequence || ' ' || op || ' ' || state || ' ' || coalesce(last_code, '') FROM hk_outbox WHERE tab = ? AND anchor = ? ORDER BY stream_sequence`,
	`SELECT 'quarantine ' || reason || ' active=' || active FROM hk_quarantine WHERE tab = ? AND anchor = ?`,
	`SELECT 'candidate ' || field FROM hk_sheet_field_state WHERE tab = ? AND anchor = ? AND candidate_hash != ''`,
	`SELECT 'conflict ' || state FROM hk_conflicts WHERE tab = ? AND anchor = ?`,
	`SELECT 'visible ' || substr(hash, 1, 8) FROM hk_visible_state WHERE tab = ? AND anchor = ?`,
}
