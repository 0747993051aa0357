package projector

import (
	"fmt"
	"strconv"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// ReadCheckpoint reads the checkpoint and store id recorded in the read
// model at path, read-only and without migrating or repairing anything
// (for checks that run before a store takes its lease). Errors: SQLite's
// (a missing or unreadable file), ErrReadModelInvalid for a malformed
// checkpoint.
func ReadCheckpoint(path string) (checkpoint uint64, storeID string, err error) {
	conn, err := openConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	meta := map[string]string{}
	err = sqlitex.Execute(conn, "SELECT key, value FROM hk_meta WHERE key IN ('checkpoint', 'store_id')", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { meta[s.ColumnText(0)] = s.ColumnText(1); return nil }})
	if err != nil {
		return 0, "", err
	}
	cp, perr := strconv.ParseUint(meta["checkpoint"], 10, 64)
	if perr != nil {
		return 0, "", fmt.Errorf("%w: checkpoint %q", ErrReadModelInvalid, meta["checkpoint"])
	}
	return cp, meta["store_id"], nil
}

// ReadEpochHighWater reads the highest writer epoch the read model at
// path has seen (0: none), read-only like ReadCheckpoint: the lease
// history keeps every epoch a writer of the store took, so it outlives a
// log.db replaced by an older copy (an accepted log gap), which must
// never hand those epochs out again. Errors: SQLite's.
func ReadEpochHighWater(path string) (uint64, error) {
	conn, err := openConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	var hw int64
	err = sqlitex.Execute(conn, "SELECT max(coalesce((SELECT max(epoch) FROM hk_lease_history), 0), coalesce((SELECT max(epoch) FROM hk_lease), 0))",
		&sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error { hw = s.ColumnInt64(0); return nil }})
	if err != nil || hw < 0 {
		return 0, err
	}
	return uint64(hw), nil
}
