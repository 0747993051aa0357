package projector_test

import (
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// TestMigration6AddsTheSubscriptionsTableAndConsumerTablesAreIgnored: a
// read model at schema version 5 gains hk_subscriptions in place; a
// consumer's own table in the file neither makes it invalid at the next
// open nor enters its digest, and neither do the checkpoints.
func TestMigration6AddsTheSubscriptionsTableAndConsumerTablesAreIgnored(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1)}))
	must(t, p.Close())
	before, err := projector.Digest(path)
	must(t, err)
	execSQL(t, path, `DROP TABLE hk_subscriptions`)
	downgradeTo7(t, path)
	execSQL(t, path, `DROP TABLE hk_migrated_rows`) // added by migration 7
	execSQL(t, path, `DROP INDEX hk_outbox_dropped`)
	execSQL(t, path, `DROP INDEX hk_conflicts_open`)
	execSQL(t, path, `UPDATE hk_meta SET value = '5' WHERE key = 'schema_version'`)
	p = openAt(t, path)
	must(t, p.Close())
	wantRows(t, "subscriptions table", query(t, path, `SELECT name FROM sqlite_master WHERE name = 'hk_subscriptions'`), "hk_subscriptions")
	execSQL(t, path, `CREATE TABLE app_totals (k TEXT PRIMARY KEY, n INTEGER)`)
	execSQL(t, path, `CREATE INDEX app_totals_n ON app_totals (n)`)
	execSQL(t, path, `INSERT INTO app_totals VALUES ('x', 1)`)
	execSQL(t, path, `INSERT INTO hk_subscriptions VALUES ('s', 'callback', 1)`)
	p = openAt(t, path)
	if p.Checkpoint() != 1 {
		t.Fatalf("checkpoint %d after reopening with a consumer table, want 1", p.Checkpoint())
	}
	must(t, p.Close())
	after, err := projector.Digest(path)
	must(t, err)
	if before != after {
		t.Fatalf("digest %s with a consumer table and a checkpoint, %s without", after, before)
	}
}
