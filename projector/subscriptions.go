package projector

import (
	"slices"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// subscriptionsTable holds the durable checkpoints of named subscriptions.
// Its rows are not derived from the log: Digest leaves the table out, and
// a consumer's own tables in the same database are ignored by the schema
// check and by Digest (see storeTable).
const subscriptionsTable = "hk_subscriptions"

// SubscriptionMode says who commits a subscription's checkpoint.
type SubscriptionMode string

const (
	// SubscriptionCallback: the store records the checkpoint after the
	// handler returned (at-least-once).
	SubscriptionCallback SubscriptionMode = "callback"
	// SubscriptionTransactional: the checkpoint commits in the same
	// transaction as the handler's own writes (exactly once with them).
	SubscriptionTransactional SubscriptionMode = "transactional"
)

// SubscriptionRow is one row of hk_subscriptions.
type SubscriptionRow struct {
	Name       string
	Mode       SubscriptionMode
	Checkpoint uint64
	// Stored is the checkpoint as the table holds it: a negative one
	// (Checkpoint 0 then) is invalid, as one past the log head is.
	Stored int64
}

// ListSubscriptions reads every subscription's checkpoint, by name. A read
// model older than the table has none.
func ListSubscriptions(conn *sqlite.Conn) ([]SubscriptionRow, error) {
	if !hasTable(conn, subscriptionsTable) {
		return nil, nil
	}
	var out []SubscriptionRow
	err := sqlitex.Execute(conn, "SELECT name, mode, checkpoint FROM hk_subscriptions ORDER BY name", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error {
			stored := s.ColumnInt64(2)
			out = append(out, SubscriptionRow{Name: s.ColumnText(0), Mode: SubscriptionMode(s.ColumnText(1)), Checkpoint: uint64(max(stored, 0)), Stored: stored})
			return nil
		}})
	return out, err
}

func hasTable(conn *sqlite.Conn, name string) bool {
	n := 0
	_ = sqlitex.Execute(conn, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", &sqlitex.ExecOptions{
		Args: []any{name}, ResultFunc: func(s *sqlite.Stmt) error { n = s.ColumnInt(0); return nil }})
	return n > 0
}

// storeTable reports whether table belongs to the store's projection of
// the log: an internal hk_ table other than the subscriptions', or the
// table of one of entities. Other tables are a consumer's own.
func storeTable(table string, entities map[string]bool) bool {
	if table == subscriptionsTable {
		return false
	}
	return strings.HasPrefix(table, "hk_") || entities[table]
}

// entityTables lists the entity tables the read model records (its
// fingerprint keys).
func entityTables(conn *sqlite.Conn) (map[string]bool, error) {
	out := map[string]bool{}
	err := sqlitex.Execute(conn, "SELECT substr(key, 13) FROM hk_meta WHERE key LIKE 'fingerprint:%'", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { out[s.ColumnText(0)] = true; return nil }})
	return out, err
}

// CarrySubscriptions copies the checkpoints of callback subscriptions
// from the read model at from (one set aside to be replaced) into the one
// at to, keeping the later checkpoint of a name both hold. A callback
// consumer's state lives outside the read model, so its checkpoint must
// outlive a rebuild; a transactional consumer's lives in the replaced
// file, so its checkpoint goes with it. It returns how many it carried; a
// from that cannot be read carries none (the error says why).
func CarrySubscriptions(from, to string) (int, error) {
	// Read-write (it writes nothing, and never creates from): a read-only
	// connection would leave -wal and -shm files beside it when it closes.
	src, err := openConn(from, sqlite.OpenReadWrite)
	if err != nil {
		return 0, err
	}
	rows, err := ListSubscriptions(src)
	src.Close()
	if err != nil {
		return 0, err
	}
	rows = slices.DeleteFunc(rows, func(r SubscriptionRow) bool { return r.Mode != SubscriptionCallback })
	if len(rows) == 0 {
		return 0, nil
	}
	dst, err := openConn(to, sqlite.OpenReadWrite)
	if err != nil {
		return 0, err
	}
	defer dst.Close()
	dst.SetBusyTimeout(10 * time.Second)
	return len(rows), upsertCheckpoints(dst, rows)
}

func upsertCheckpoints(conn *sqlite.Conn, rows []SubscriptionRow) (err error) {
	defer sqlitex.Save(conn)(&err)
	for _, r := range rows {
		err = sqlitex.Execute(conn, `INSERT INTO hk_subscriptions(name, mode, checkpoint) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET mode = excluded.mode, checkpoint = max(checkpoint, excluded.checkpoint)`,
			&sqlitex.ExecOptions{Args: []any{r.Name, string(r.Mode), int64(r.Checkpoint)}})
		if err != nil {
			return err
		}
	}
	return nil
}
