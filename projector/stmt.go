package projector

import "zombiezen.com/go/sqlite"

// exec prepares (cached per connection), binds args, runs and resets a
// statement that returns no rows. A statement that fails to prepare is an
// error, never a panic.
func (p *Projector) exec(sqlText string, args ...any) error {
	st, err := p.conn.Prepare(sqlText)
	if err != nil {
		return err
	}
	bindAll(st, args...)
	return run(st)
}

// query prepares (cached), binds args and calls fn for each row.
func (p *Projector) query(sqlText string, fn func(*sqlite.Stmt) error, args ...any) error {
	return queryConn(p.conn, sqlText, fn, args...)
}

// queryConn runs sqlText with args on conn (any connection to a read
// model, e.g. a read-only one of another process) and calls fn per row.
func queryConn(conn *sqlite.Conn, sqlText string, fn func(*sqlite.Stmt) error, args ...any) error {
	st, err := conn.Prepare(sqlText)
	if err != nil {
		return err
	}
	bindAll(st, args...)
	defer func() { st.Reset(); st.ClearBindings() }()
	for {
		ok, err := st.Step()
		if err != nil || !ok {
			return err
		}
		if err := fn(st); err != nil {
			return err
		}
	}
}
