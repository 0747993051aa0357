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
// table with its fingerprint and its row digest column last.
func TestOpenMigratesAFreshReadModel(t *testing.T) {
	p := openFresh(t)
	wantRows(t, "meta", query(t, p.Path(), `SELECT key, value FROM hk_meta ORDER BY key`),
		"checkpoint|0", "fingerprint:Airport|"+projector.Fingerprint(airportShape()),
		"schema_version|"+strconv.Itoa(projector.SchemaVersion), "store_id|"+storeID)
	wantRows(t, "internal tables", query(t, p.Path(),
		`SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name IN ('hk_meta', 'hk_entity_state', 'hk_field_state', 'hk_lease', 'hk_lease_history') ORDER BY name`),
		"hk_entity_state", "hk_field_state", "hk_lease", "hk_lease_history", "hk_meta")
	wantRows(t, "entity table columns", query(t, p.Path(), `SELECT name, type, pk FROM pragma_table_info('Airport') ORDER BY cid`),
		"id|TEXT|1", "name|TEXT|0", "altitude|INTEGER|0", "latitude|REAL|0", "active|INTEGER|0", "checked|TEXT|0", "notes|TEXT|0",
		"hk_digest|INTEGER|0")
	if p.Checkpoint() != 0 {
		t.Fatalf("fresh checkpoint %d", p.Checkpoint())
	}
	if vals, ok, err := p.EntityValues("Airport", "none"); err != nil || ok || vals != nil {
		t.Fatalf("EntityValues(Airport, none) = %v, %v, %v", vals, ok, err)
	}
	if _, _, err := p.EntityValues("Runway", "1-09"); !errors.Is(err, projector.ErrInvalidSchema) {
		t.Fatalf("EntityValues of an undeclared entity: %v", err)
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
	withFields := func(mod func(*events.EntityShape)) []events.EntityShape {
		s := airportShape()
		mod(&s)
		return []events.EntityShape{s}
	}
	cases := map[string]struct {
		prepare func(t *testing.T, path string)
		opts    projector.Options
	}{
		"foreign store id": {opts: projector.Options{StoreID: "otherstore01", Entities: testEntities()}},
		"empty store id":   {opts: projector.Options{Entities: testEntities()}},
		"column added": {opts: projector.Options{StoreID: storeID, Entities: withFields(func(s *events.EntityShape) {
			s.Fields = append(s.Fields, events.FieldShape{Name: "iata", Kind: events.KindString, Owner: events.OwnerSystem})
		})}},
		"column kind changed": {opts: projector.Options{StoreID: storeID, Entities: withFields(func(s *events.EntityShape) {
			s.Fields[1].Kind = events.KindFloat
		})}},
		"owner changed": {opts: projector.Options{StoreID: storeID, Entities: withFields(func(s *events.EntityShape) {
			s.Fields[0].Owner = events.OwnerUser
		})}},
		"nullability changed": {opts: projector.Options{StoreID: storeID, Entities: withFields(func(s *events.EntityShape) {
			s.Fields[4].Nullable = false
		})}},
		"entity added after events": {opts: projector.Options{StoreID: storeID, Entities: []events.EntityShape{
			airportShape(), {Name: "Runway", PK: "key", Fields: []events.FieldShape{{Name: "surface", Kind: events.KindString}}}}}},
		"newer schema version": {
			prepare: func(t *testing.T, path string) {
				execSQL(t, path, `UPDATE hk_meta SET value = ? WHERE key = 'schema_version'`, strconv.Itoa(projector.SchemaVersion+1))
			},
			opts: projector.Options{StoreID: storeID, Entities: testEntities()}},
		"checkpoint not a number": {
			prepare: func(t *testing.T, path string) {
				execSQL(t, path, `UPDATE hk_meta SET value = 'x' WHERE key = 'checkpoint'`)
			},
			opts: projector.Options{StoreID: storeID, Entities: testEntities()}},
		"not a database": {
			prepare: func(t *testing.T, path string) {
				for _, suffix := range []string{"", "-wal", "-shm"} {
					if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
				}
				must(t, os.WriteFile(path, []byte(strings.Repeat("not a database ", 400)), 0o600))
			},
			opts: projector.Options{StoreID: storeID, Entities: testEntities()}},
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
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}})
	must(t, err)
	defer p.Close()
	wantRows(t, "tables", query(t, path, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Airport', 'Runway') ORDER BY name`), "Airport", "Runway")
}

// TestReopenWithoutAnEntityThatHasEventsIsInvalid: once events were
// applied, reopening with an entity no longer declared fails with
// ErrReadModelInvalid (the store rebuilds): keeping its table, never
// updated again, would make the live read model differ from a rebuild
// with the same entities (I23).
func TestReopenWithoutAnEntityThatHasEventsIsInvalid(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}})
	must(t, err)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Runway", "1-09", map[string]any{"surface": "asphalt"}, 1)}))
	must(t, p.Close())

	p, err = projector.Open(path, projector.Options{StoreID: storeID, Entities: testEntities()})
	if err == nil {
		p.Close()
		t.Fatalf("reopened without Runway: no error; tables %q (a rebuild has none)",
			query(t, path, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'Runway'`))
	}
	if !errors.Is(err, projector.ErrReadModelInvalid) {
		t.Fatalf("Open: %v", err)
	}
}

// TestUndeclaredEntityTableIsDroppedFromAnEmptyReadModel: before any
// event was applied, an entity no longer declared simply loses its
// table and fingerprint, like a fresh build.
func TestUndeclaredEntityTableIsDroppedFromAnEmptyReadModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}})
	must(t, err)
	must(t, p.Close())
	p = openAt(t, path)
	defer p.Close()
	wantRows(t, "tables", query(t, path, `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('Airport', 'Runway') ORDER BY name`), "Airport")
	wantRows(t, "fingerprints", query(t, path, `SELECT key FROM hk_meta WHERE key LIKE 'fingerprint:%'`), "fingerprint:Airport")
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

// TestValidateShapesRejects bad names, reserved prefixes and duplicates
// (case-insensitive, as SQLite compares identifiers) and unknown kinds;
// Open refuses such entities before touching the file.
func TestValidateShapesRejects(t *testing.T) {
	field := func(name string) events.FieldShape {
		return events.FieldShape{Name: name, Kind: events.KindString, Owner: events.OwnerSystem}
	}
	shape := func(entity, pk string, fields ...string) events.EntityShape {
		s := events.EntityShape{Name: entity, PK: pk}
		for _, f := range fields {
			s.Fields = append(s.Fields, field(f))
		}
		return s
	}
	unknownKind := shape("Airport", "id", "name")
	unknownKind.Fields[0].Kind = "decimal"
	cases := map[string][]events.EntityShape{
		"bad entity name":         {shape("1Airport", "id")},
		"reserved entity name":    {shape("hk_meta", "id")},
		"sqlite entity name":      {shape("sqlite_sequence", "id")},
		"duplicate entity":        {shape("Airport", "id"), shape("airport", "id")},
		"bad primary key":         {shape("Airport", "")},
		"bad column":              {shape("Airport", "id", "ok", "not ok")},
		"duplicate column":        {shape("Airport", "id", "name", "Name")},
		"column named like pk":    {shape("Airport", "id", "ID")},
		"reserved column":         {shape("Airport", "id", "hk_x")},
		"empty entity name":       {shape("", "id")},
		"entity name with quotes": {shape(`Air"port`, "id")},
		"unknown kind":            {unknownKind},
	}
	for name, s := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := projector.ValidateShapes(s); !errors.Is(err, projector.ErrInvalidSchema) {
				t.Fatalf("ValidateShapes: %v", err)
			}
			path := filepath.Join(t.TempDir(), projector.FileName)
			p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: s})
			if err == nil {
				p.Close()
			}
			if !errors.Is(err, projector.ErrInvalidSchema) {
				t.Fatalf("Open: %v", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("Open with invalid entities created the file: %v", err)
			}
		})
	}
	if err := projector.ValidateShapes(testEntities()); err != nil {
		t.Fatalf("valid entities rejected: %v", err)
	}
	if err := projector.ValidateShapes(nil); err != nil {
		t.Fatalf("no entities rejected: %v", err)
	}
}

// TestBuildWritesNoJournalAndClosesAsAReadModel: a read model opened with
// Options.Build is written without a journal; CloseBuilt leaves it in WAL
// mode with the same contents as one built the ordinary way, and reopens
// as a read model. A file that holds events is not switched to build mode.
func TestBuildWritesNoJournalAndClosesAsAReadModel(t *testing.T) {
	dir := t.TempDir()
	evs := func() []events.Event {
		h := newHistory()
		return []events.Event{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", map[string]any{"name": "b"}, 1)}
	}
	plain := openAt(t, filepath.Join(dir, "plain.sqlite"))
	must(t, plain.Apply(evs()))
	must(t, plain.Close())
	path := filepath.Join(dir, "built.sqlite")
	built, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: testEntities(), Build: true})
	must(t, err)
	wantRows(t, "journal while building", query(t, path, "PRAGMA journal_mode"), "delete")
	must(t, built.Apply(evs()))
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a WAL file while building: %v", err)
	}
	must(t, built.CloseBuilt())
	wantRows(t, "journal once built", query(t, path, "PRAGMA journal_mode"), "wal")
	if got, want := dump(t, path), dump(t, filepath.Join(dir, "plain.sqlite")); string(got) != string(want) {
		t.Fatalf("built:\n%s\n--- plain:\n%s", got, want)
	}
	again, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: testEntities(), Build: true})
	must(t, err)
	defer again.Close()
	wantRows(t, "journal of a reopened file", query(t, path, "PRAGMA journal_mode"), "wal")
	if again.Checkpoint() != 2 {
		t.Fatalf("reopened checkpoint %d", again.Checkpoint())
	}
}

// TestOpenSizesTheWriterPageCache: the projector's connection keeps 16 MiB
// of pages, not SQLite's default 2 MiB, so a unit's or a settlement's
// transaction does not read again the pages it revisits (row 5c).
func TestOpenSizesTheWriterPageCache(t *testing.T) {
	p := openFresh(t)
	got, err := p.CacheSizeKiB()
	must(t, err)
	if got != 16384 {
		t.Errorf("cache_size = %d KiB, want 16384", got)
	}
}
