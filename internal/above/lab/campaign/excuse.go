package campaign

import (
	"context"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Excuse says what a row may show instead of canonical state.
type Excuse int

// Excuses, weakest first.
const (
	ExcusedNot    Excuse = iota
	ExcusedValue         // the row's values (active quarantine: evidence not yet cleared)
	ExcusedAlways        // the row's values and its absence (an open conflict: people resolve it)
)

// Excuses is what open conflicts and active quarantine excuse, by
// "tab/anchor", with their counts.
type Excuses struct {
	Rows       map[string]Excuse
	Open       int            // open conflicts
	Quarantine map[string]int // active quarantine records by reason
}

// ReadExcuses: an Input row under an open conflict keeps the person's
// value until someone acknowledges (I11), and anti-entropy leaves it
// alone even when the row is gone (a deleted tab, a replaced
// spreadsheet): people resolve it first; a row under active quarantine is
// evidence not yet cleared: its values are not compared, but its absence
// is not excused.
func ReadExcuses(ctx context.Context, s *hikoutei.Store) (Excuses, error) {
	ex := Excuses{Rows: map[string]Excuse{}, Quarantine: map[string]int{}}
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil {
		return ex, err
	}
	ex.Open = len(open)
	for _, c := range open {
		ex.Rows[c.Tab+"/"+c.Anchor] = ExcusedAlways
	}
	q, err := ActiveQuarantine(s.ReadModelPath())
	if err != nil {
		return ex, err
	}
	for _, k := range q {
		if ex.Rows[k.Tab+"/"+k.Anchor] == ExcusedNot {
			ex.Rows[k.Tab+"/"+k.Anchor] = ExcusedValue
		}
		ex.Quarantine[k.Reason]++
	}
	return ex, nil
}

// For is the excuse function sheetcheck.Tab takes for tab: the stronger
// of this excuse and extra's (extra may be nil).
func (ex Excuses) For(tab string, extra func(tab, anchor string) Excuse) func(anchor string, missing bool) bool {
	return func(anchor string, missing bool) bool {
		e := ex.Rows[tab+"/"+anchor]
		if extra != nil {
			e = max(e, extra(tab, anchor))
		}
		return e == ExcusedAlways || (!missing && e == ExcusedValue)
	}
}

// Quarantined is one active quarantine record.
type Quarantined struct{ Tab, Anchor, Reason string }

// ActiveQuarantine lists every active quarantine record (read-only from
// the read model).
func ActiveQuarantine(readModel string) ([]Quarantined, error) {
	conn, err := sqlite.OpenConn(readModel, sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	var out []Quarantined
	err = sqlitex.Execute(conn, `SELECT tab, anchor, reason FROM hk_quarantine WHERE active = 1`, &sqlitex.ExecOptions{
		ResultFunc: func(st *sqlite.Stmt) error {
			out = append(out, Quarantined{st.ColumnText(0), st.ColumnText(1), st.ColumnText(2)})
			return nil
		}})
	return out, err
}
