package projector_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// TestOpenMigratesAFreshReadModel: a new file gets every internal table,
// the current schema version, its store id, checkpoint 0 and the entity
// table with its fingerprint.
func TestOpenMigratesAFreshReadModel(t *testing.T) {
	p := openFresh(t)
	wantRows(t, "meta", query(t, p.Path(), `SELECT key, value FROM hk_meta ORDER BY key`),
		"checkpoint|0", "fingerprint:Airport|"+airportTable().Fingerprint(),
		"schema_version|"+strconv.Itoa(projector.SchemaVersion), "store_id|"+storeID)
	wantRows(t, "internal tables", query(t, p.Path(),
		`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name IN ('hk_meta', 'hk_entity_state', 'hk_field_state', 'hk_lease', 'hk_lease_history') ORDER BY name`),
		"hk_entity_state", "hk_field_state", "hk_lease", "hk_lease_history", "hk_meta")
	wantRows(t, "entity table columns", query(t, p.Path(), `SELECT name, type, pk FROM pragma_table_info('Airport') ORDER BY cid`),
		"id|TEXT|1", "name|TEXT|0", "altitude|INTEGER|0", "latitude|REAL|0", "active|INTEGER|0", "checked|TEXT|0", "notes|TEXT|0")
	if p.Checkpoint() != 0 {
		t.Fatalf("fresh checkpoint %d", p.Checkpoint())
	}
	if tb, ok := p.Table("Airport"); !ok || tb.PK != "id" {
		t.Fatalf("Table(Airport) = %+v, %v", tb, ok)
	}
}

// TestReopenKeepsDataAndCheckpoint: reopening with the same store id and
// schema neither re-migrates nor loses anything.
func TestReopenKeepsDataAndCheckpoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", map[string]any{"name": "b"}, 1)}))
	before := dump(t, path)
	must(t, p.Close())
	p = openAt(t, path)
	defer p.Close()
	if p.Checkpoint() != 2 || string(dump(t, path)) != string(before) {
		t.Fatalf("reopened: checkpoint %d\n%s\n--- before:\n%s", p.Checkpoint(), dump(t, path), before)
	}
}

// builtReadModel returns a read model file holding one applied event.
func builtReadModel(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1)}))
	must(t, p.Close())
	return path
}

// TestOpenRejectsReadModelItCannotTrust: another store's read model, a
// newer schema version, a changed entity shape (column added, kind or
// owner changed, an entity added after events were applied) and a file
// that is not SQLite all fail with ErrReadModelInvalid (the store then
// rebuilds from the log).
func TestOpenRejectsReadModelItCannotTrust(t *testing.T) {
	withColumns := func(mod func(*projector.Table)) projector.Schema {
		tb := airportTable()
		mod(&tb)
		return projector.Schema{Tables: []projector.Table{tb}}
	}
	cases := map[string]struct {
		prepare func(t *testing.T, path string)
		opts    projector.Options
	}{
		"foreign store id": {opts: projector.Options{StoreID: "otherstore01", Schema: testSchema()}},
		"empty store id":   {opts: projector.Options{Schema: testSchema()}},
		"column added": {opts: projector.Options{StoreID: storeID, Schema: withColumns(func(tb *projector.Table) {
			tb.Columns = append(tb.Columns, projector.Column{Name: "iata", Kind: projector.KindString, Owner: projector.OwnerSystem})
		})}},
		"column kind changed": {opts: projector.Options{StoreID: storeID, Schema: withColumns(func(tb *projector.Table) {
			tb.Columns[1].Kind = projector.KindFloat
		})}},
		"owner changed": {opts: projector.Options{StoreID: storeID, Schema: withColumns(func(tb *projector.Table) {
			tb.Columns[0].Owner = projector.OwnerUser
		})}},
		"nullability changed": {opts: projector.Options{StoreID: storeID, Schema: withColumns(func(tb *projector.Table) {
			tb.Columns[4].Nullable = false
		})}},
		"entity added after events": {opts: projector.Options{StoreID: storeID, Schema: projector.Schema{Tables: []projector.Table{
			airportTable(), {Entity: "Runway", PK: "key", Columns: []projector.Column{{Name: "surface", Kind: projector.KindString}}}}}}},
		"newer schema version": {
			prepare: func(t *testing.T, path string) {
				execSQL(t, path, `UPDATE hk_meta SET value = ? WHERE key = 'schema_version'`, strconv.Itoa(projector.SchemaVersion+1))
			},
			opts: projector.Options{StoreID: storeID, Schema: testSchema()}},
		"checkpoint not a number": {
			prepare: func(t *testing.T, path string) {
				execSQL(t, path, `UPDATE hk_meta SET value = 'x' WHERE key = 'checkpoint'`)
			},
			opts: projector.Options{StoreID: storeID, Schema: testSchema()}},
		"not a database": {
			prepare: func(t *testing.T, path string) {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
				}
				must(t, os.WriteFile(path, []byte(strings.Repeat("not a database ", 400)), 0o600))
			},
			opts: projector.Options{StoreID: storeID, Schema: testSchema()}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := builtReadModel(t)
			if c.prepare != nil {
				c.prepare(t, path)
			}
			p, err := projector.Open(path, c.opts)
			if err == nil {
				p.Close()
			}
			if !errors.Is(err, projector.ErrReadModelInvalid) {
				t.Fatalf("Open: %v, want ErrReadModelInvalid", err)
			}
		})
	}
}

// TestNewEntityOnAnEmptyReadModelIsCreated: before any event was applied,
// a schema with more entities simply creates their tables.
func TestNewEntityOnAnEmptyReadModelIsCreated(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	runway := projector.Table{Entity: "Runway", PK: "key", Columns: []projector.Column{{Name: "surface", Kind: projector.KindString, Owner: projector.OwnerSystem}}}
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Schema: projector.Schema{Tables: []projector.Table{airportTable(), runway}}})
	must(t, err)
	defer p.Close()
	wantRows(t, "tables", query(t, path, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Airport', 'Runway') ORDER BY name`), "Airport", "Runway")
}

func execSQL(t *testing.T, path, q string, args ...any) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	must(t, err)
	defer conn.Close()
	must(t, sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args}))
}

func TestValidIdent(t *testing.T) {
	valid := []string{"Airport", "a", "A_1", "iata", "select", "x" + strings.Repeat("y", 62), "HKx", "sqlite"}
	invalid := []string{"", "1abc", "_x", "hk_meta", "HK_x", "Hk_", "sqlite_master", "SQLITE_x", "a-b", "a b", "a.b",
		`a"b`, "caf\u00e9", "x" + strings.Repeat("y", 63), "a;DROP"}
	for _, s := range valid {
		if !projector.ValidIdent(s) {
			t.Errorf("ValidIdent(%q) = false", s)
		}
	}
	for _, s := range invalid {
		if projector.ValidIdent(s) {
			t.Errorf("ValidIdent(%q) = true", s)
		}
	}
}

// TestSchemaValidateRejects bad names, reserved prefixes and duplicates
// (case-insensitive, as SQLite compares identifiers); Open refuses such a
// schema before touching the file.
func TestSchemaValidateRejects(t *testing.T) {
	col := func(name string) projector.Column {
		return projector.Column{Name: name, Kind: projector.KindString, Owner: projector.OwnerSystem}
	}
	table := func(entity, pk string, cols ...string) projector.Table {
		tb := projector.Table{Entity: entity, PK: pk}
		for _, c := range cols {
			tb.Columns = append(tb.Columns, col(c))
		}
		return tb
	}
	cases := map[string]projector.Schema{
		"bad entity name":         {Tables: []projector.Table{table("1Airport", "id")}},
		"reserved entity name":    {Tables: []projector.Table{table("hk_meta", "id")}},
		"sqlite entity name":      {Tables: []projector.Table{table("sqlite_sequence", "id")}},
		"duplicate entity":        {Tables: []projector.Table{table("Airport", "id"), table("airport", "id")}},
		"bad primary key":         {Tables: []projector.Table{table("Airport", "")}},
		"bad column":              {Tables: []projector.Table{table("Airport", "id", "ok", "not ok")}},
		"duplicate column":        {Tables: []projector.Table{table("Airport", "id", "name", "Name")}},
		"column named like pk":    {Tables: []projector.Table{table("Airport", "id", "ID")}},
		"reserved column":         {Tables: []projector.Table{table("Airport", "id", "hk_x")}},
		"empty entity name":       {Tables: []projector.Table{table("", "id")}},
		"entity name with quotes": {Tables: []projector.Table{table(`Air"port`, "id")}},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := s.Validate(); !errors.Is(err, projector.ErrInvalidSchema) {
				t.Fatalf("Validate: %v", err)
			}
			path := filepath.Join(t.TempDir(), projector.FileName)
			p, err := projector.Open(path, projector.Options{StoreID: storeID, Schema: s})
			if err == nil {
				p.Close()
			}
			if !errors.Is(err, projector.ErrInvalidSchema) {
				t.Fatalf("Open: %v", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Open with an invalid schema created the file: %v", err)
			}
		})
	}
	if err := testSchema().Validate(); err != nil {
		t.Fatalf("valid schema rejected: %v", err)
	}
	if err := (projector.Schema{}).Validate(); err != nil {
		t.Fatalf("empty schema rejected: %v", err)
	}
}
