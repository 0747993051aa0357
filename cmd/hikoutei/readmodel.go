package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/projector"
)

// readModel opens a store's read.sqlite read-only (works while the store
// runs: WAL readers never block the writer) and creates no file in the
// store directory (engine.OpenReadModelReadOnly); done closes it. A read
// model that cannot be read is read_model_invalid.
func readModel(dir string) (conn *sqlite.Conn, done func(), err error) {
	return engine.OpenReadModelReadOnly(dir)
}

// openReadModel is readModel for the commands that read nothing else: a
// read model that cannot be read is read_model_invalid with the command
// that rebuilds it.
func openReadModel(dir string) (conn *sqlite.Conn, done func(), err error) {
	conn, done, err = readModel(dir)
	if errors.Is(err, projector.ErrReadModelInvalid) {
		return nil, nil, fmt.Errorf("%w; %s", err, rebuildAdvice(dir))
	}
	return conn, done, err
}

// rebuildAdvice says how to rebuild dir's read model from the log, as the
// next step after read_model_invalid.
func rebuildAdvice(dir string) string {
	advice := fmt.Sprintf("with the store stopped, `hikoutei replay --dir %s` rebuilds it from the log "+
		"(keeping this one as %s.before-rebuild-<time>)", shellWord(dir), hikoutei.ReadModelFile)
	if fi, err := os.Stat(filepath.Join(dir, hikoutei.ReadModelFile)); err == nil && fi.Mode().IsRegular() {
		advice += "; opening the store rebuilds it too, setting a damaged file aside"
	}
	return advice
}

// inspectReadModel opens a store's read model read-only for the
// inspection commands (outbox, quarantine). Like status, it refuses a
// directory that is not a store or lost its log; it takes no lease and
// does not open log.db, so a running writer never blocks it.
func inspectReadModel(dir string) (conn *sqlite.Conn, done func(), err error) {
	if err := requireStore(dir); err != nil {
		return nil, nil, err
	}
	return openReadModel(dir)
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
