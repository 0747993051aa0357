package projector

import (
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Sync health's queries, for their plans.
var DroppedRowsQuery, MigratedRowsQuery = droppedRows, migratedRows

// ItemWise makes p project batch settle events item by item only, as
// before the set-wise paths (outbox_batch.go), for comparing the two.
func (p *Projector) ItemWise() { p.itemWise = true }

// CacheSizeKiB is the page cache size of the projector's connection
// (PRAGMA cache_size, negated to KiB).
func (p *Projector) CacheSizeKiB() (int64, error) {
	var n int64
	err := sqlitex.ExecuteTransient(p.conn, "PRAGMA cache_size", &sqlitex.ExecOptions{ResultFunc: func(s *sqlite.Stmt) error {
		n = -s.ColumnInt64(0)
		return nil
	}})
	return n, err
}

// SetBuildTxEvents makes a building read model commit every n events;
// the returned func restores the size.
func SetBuildTxEvents(n int) (restore func()) {
	was := buildTxEvents
	buildTxEvents = n
	return func() { buildTxEvents = was }
}
