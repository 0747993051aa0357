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

// CheckpointWALWith makes p's background checkpoints run run instead
// (nil: stops none, replaces nothing); call it before p's first apply.
func (p *Projector) CheckpointWALWith(run func(conn *sqlite.Conn) error) { p.wal.run = run }

// PassiveCheckpointFrames runs a PASSIVE checkpoint on conn and returns
// the frames in its write-ahead log and how many of them are in the
// database (PRAGMA wal_checkpoint's log and checkpointed columns).
func PassiveCheckpointFrames(conn *sqlite.Conn) (log, copied int, err error) {
	err = sqlitex.ExecuteTransient(conn, "PRAGMA wal_checkpoint(PASSIVE)", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error {
			log, copied = s.ColumnInt(1), s.ColumnInt(2)
			return nil
		}})
	return log, copied, err
}

// WriterAutoCheckpoint is PRAGMA wal_autocheckpoint of p's writing
// connection (frames; 0: SQLite's automatic checkpoints are off).
func (p *Projector) WriterAutoCheckpoint() (int, error) {
	var n int
	err := sqlitex.ExecuteTransient(p.conn, "PRAGMA wal_autocheckpoint", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { n = s.ColumnInt(0); return nil }})
	return n, err
}

// TruncateOrOwe is Remask's last step (truncateOrOwe).
func (p *Projector) TruncateOrOwe() (bool, error) { return p.truncateOrOwe() }
