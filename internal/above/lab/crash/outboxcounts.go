package crash

import (
	"fmt"
	"maps"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/projector"
)

// keptCounts compares the outbox's kept counts by state of the read model
// at path (hk_outbox_counts, which Digest leaves out) with a count of its
// outbox rows: "" when they agree, else both, for the campaign's report.
func keptCounts(path string) (string, error) {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	kept, err := projector.ReadOutboxCounts(conn)
	if err != nil {
		return "", err
	}
	counted := map[string]int64{}
	err = sqlitex.Execute(conn, projector.OutboxCountQuery, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		counted[st.ColumnText(0)] = st.ColumnInt64(1)
		return nil
	}})
	if err != nil {
		return "", err
	}
	keptN := map[string]int64{}
	for s, n := range kept {
		if n != 0 {
			keptN[string(s)] = n
		}
	}
	if maps.Equal(keptN, counted) {
		return "", nil
	}
	return fmt.Sprintf("kept %v, counted %v", keptN, counted), nil
}
