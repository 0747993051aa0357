package converge

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// diagnose describes, from the read model, what holds back each anchor
// that differs from canonical state: its effects, quarantine, candidates
// and conflicts (for the report of a run that did not converge).
func diagnose(readModel string, st state) string {
	conn, err := sqlite.OpenConn(readModel, sqlite.OpenReadOnly)
	if err != nil {
		return err.Error()
	}
	defer conn.Close()
	var b strings.Builder
	for tab, rep := range st.reports {
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
