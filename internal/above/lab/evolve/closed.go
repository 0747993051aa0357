package evolve

import (
	"fmt"
	"path/filepath"
	"strings"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// readClosed reads the records of sh's entity from the read model of the
// closed store in dir, by sh's columns (read-only: what the next Open
// classifies a change against).
func readClosed(dir string, sh *shape) (map[string]rec, error) {
	conn, err := sqlite.OpenConn(filepath.Join(dir, hikoutei.ReadModelFile), sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	cols := []string{fmt.Sprintf("%q", sh.pk)}
	for _, f := range sh.fields {
		cols = append(cols, fmt.Sprintf("%q", f.name))
	}
	out := map[string]rec{}
	q := fmt.Sprintf("SELECT %s FROM %q", strings.Join(cols, ", "), sh.entity)
	err = sqlitex.Execute(conn, q, &sqlitex.ExecOptions{ResultFunc: func(st *sqlite.Stmt) error {
		r := rec{}
		for i, f := range sh.fields {
			r[f.name] = column(st, i+1, f.kind)
		}
		out[st.ColumnText(0)] = r
		return nil
	}})
	return out, err
}

// column reads a column as kind (NULL: the zero value, as Find reads it).
func column(st *sqlite.Stmt, i int, k kind) any {
	switch k {
	case kindInt:
		return st.ColumnInt64(i)
	case kindFloat:
		return st.ColumnFloat(i)
	}
	return st.ColumnText(i)
}

// openConflicts counts the open conflicts on entity's records in the
// closed store's read model.
func openConflicts(dir, entity string) (int, error) {
	conn, err := sqlite.OpenConn(filepath.Join(dir, hikoutei.ReadModelFile), sqlite.OpenReadOnly)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	n := 0
	err = sqlitex.Execute(conn, `SELECT count(*) FROM hk_conflicts WHERE state = 'open' AND entity = ?`,
		&sqlitex.ExecOptions{Args: []any{entity}, ResultFunc: func(st *sqlite.Stmt) error { n = st.ColumnInt(0); return nil }})
	return n, err
}

// logHead is the last sequence of the closed store's log.
func logHead(dir string) (uint64, error) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Head()
}

// logTypes lists the types of the closed store's events from seq on,
// except the writer lease's own (for a report).
func logTypes(dir string, from uint64) []string {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return []string{err.Error()}
	}
	defer l.Close()
	var out []string
	_ = l.ReadFrom(from, func(e events.Event) error {
		if strings.HasPrefix(e.Stream, events.LeaseStream("")) {
			return nil
		}
		out = append(out, e.Stream+" "+string(e.Payload.EventType()))
		return nil
	})
	return out
}
