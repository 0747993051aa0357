package projector

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Digest hashes every table of the read model at path — names, column
// types and every row in primary-key order — into "xxh64:…". Two read models
// with equal digests hold the same data (I23). It opens its own read-only
// connection.
func Digest(path string) (string, error) {
	h := xxhash.New()
	err := walkTables(path, func(line string) { h.WriteString(line); h.WriteString("\n") })
	if err != nil {
		return "", err
	}
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], h.Sum64())
	return fmt.Sprintf("xxh64:%x", sum), nil
}

// TableDigests is Digest table by table: each table's name mapped to the
// xxh64 of its column names and rows (as Dump renders them), so two read
// models can be compared table by table.
func TableDigests(path string) (map[string]string, error) {
	conn, err := openConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReadModelInvalid, err)
	}
	defer conn.Close()
	return TableDigestsOn(conn)
}

// TableDigestsOn is TableDigests on a connection the caller opened (and
// closes): one that leaves nothing in the store directory.
func TableDigestsOn(conn *sqlite.Conn) (map[string]string, error) {
	tables, err := tableNames(conn)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(tables))
	for _, t := range tables {
		h := xxhash.New()
		if err := walkRows(conn, t, func(line string) { h.WriteString(line); h.WriteString("\n") }); err != nil {
			return nil, fmt.Errorf("%s: %w", t, err)
		}
		out[t] = fmt.Sprintf("xxh64:%016x", h.Sum64())
	}
	return out, nil
}

// Dump writes every table as text, one row a line in primary-key order: the
// format of the golden files.
func Dump(path string, w io.Writer) error {
	var err error
	werr := walkTables(path, func(line string) {
		if err == nil {
			_, err = io.WriteString(w, line+"\n")
		}
	})
	if werr != nil {
		return werr
	}
	return err
}

func walkTables(path string, emit func(string)) error {
	conn, err := openConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReadModelInvalid, err)
	}
	defer conn.Close()
	tables, err := tableNames(conn)
	if err != nil {
		return err
	}
	for _, t := range tables {
		emit("== " + t)
		if err := walkRows(conn, t, emit); err != nil {
			return err
		}
	}
	return nil
}

// tableNames lists the tables of the store's projection (storeTable):
// not the subscriptions' checkpoints nor a consumer's own tables, nor the
// outbox's kept counts (derived from hk_outbox as an index is: a read
// model migrated to schema 8 holds no row for a state no effect was in,
// a rebuilt one a row of 0 for each state an effect left). A database
// without hk_meta (not a read model) lists every table but the
// checkpoints.
func tableNames(conn *sqlite.Conn) ([]string, error) {
	var names []string
	err := sqlitex.Execute(conn, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
		&sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error { names = append(names, s.ColumnText(0)); return nil }})
	if err != nil {
		return nil, err
	}
	entities, eerr := entityTables(conn)
	names = slices.DeleteFunc(names, func(t string) bool {
		return t == subscriptionsTable || t == outboxCountsTable || eerr == nil && !storeTable(t, entities)
	})
	sort.Strings(names)
	return names, nil
}

// walkRows emits a header of column names, then each row ordered by every
// column (a total order that needs no knowledge of the key).
func walkRows(conn *sqlite.Conn, table string, emit func(string)) error {
	stmt, _, err := conn.PrepareTransient(fmt.Sprintf("SELECT * FROM %q", table))
	if err != nil {
		return err
	}
	n := stmt.ColumnCount()
	cols, order := make([]string, n), make([]string, n)
	for i := range n {
		cols[i], order[i] = stmt.ColumnName(i), fmt.Sprint(i+1)
	}
	stmt.Finalize()
	emit("   " + strings.Join(cols, " | "))
	q := fmt.Sprintf("SELECT * FROM %q ORDER BY %s", table, strings.Join(order, ", "))
	return sqlitex.ExecuteTransient(conn, q, &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		vals := make([]string, n)
		for i := range n {
			vals[i] = renderCell(s, i)
		}
		emit("   " + strings.Join(vals, " | "))
		return nil
	}})
}

// renderCell renders a value with its storage class so 1, 1.0 and "1" differ.
func renderCell(s *sqlite.Stmt, i int) string {
	switch s.ColumnType(i) {
	case sqlite.TypeNull:
		return "NULL"
	case sqlite.TypeInteger:
		return fmt.Sprintf("i:%d", s.ColumnInt64(i))
	case sqlite.TypeFloat:
		f := s.ColumnFloat(i)
		return fmt.Sprintf("f:%s", formatFloat(f))
	case sqlite.TypeBlob:
		return fmt.Sprintf("b:%x", s.ColumnText(i))
	}
	return fmt.Sprintf("t:%q", s.ColumnText(i))
}

func formatFloat(f float64) string {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Sprint(f)
	}
	return fmt.Sprintf("%v", f)
}
