package main

import (
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// readModel opens a store's read.sqlite read-only (works while the store
// runs: WAL readers never block the writer) and creates no file in the
// store directory (engine.OpenReadModelReadOnly); done closes it.
func readModel(dir string) (conn *sqlite.Conn, done func(), err error) {
	return engine.OpenReadModelReadOnly(dir)
}

// inspectReadModel opens a store's read model read-only for the
// inspection commands (outbox, quarantine). Like status, it refuses a
// directory that is not a store or lost its log; it takes no lease and
// does not open log.db, so a running writer never blocks it.
func inspectReadModel(dir string) (conn *sqlite.Conn, done func(), err error) {
	if err := requireStore(dir); err != nil {
		return nil, nil, err
	}
	return readModel(dir)
}

// scalar runs a one-value query; a missing table (older read model) gives 0.
func scalar(conn *sqlite.Conn, q string, args ...any) int64 {
	var n int64
	_ = sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args, ResultFunc: func(s *sqlite.Stmt) error {
		n = s.ColumnInt64(0)
		return nil
	}})
	return n
}

func text(conn *sqlite.Conn, q string, args ...any) string {
	var v string
	_ = sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args, ResultFunc: func(s *sqlite.Stmt) error {
		v = s.ColumnText(0)
		return nil
	}})
	return v
}
