package projector_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// exec runs one statement on its own read-write connection: what the
// sqlite3 command-line tool does to a read model.
func exec(t testing.TB, path, q string, args ...any) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	must(t, err)
	defer conn.Close()
	must(t, sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args}))
}

// selectAll reads every Airport row through projector.Select.
func selectAll(t testing.TB, path string) ([][]any, error) {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	must(t, err)
	defer conn.Close()
	var rows [][]any
	err = projector.Select(conn, airportShape(), projector.Query{}, func(vals []any) error {
		rows = append(rows, vals)
		return nil
	})
	return rows, err
}

// TestRowDigestIsTheDocumentedHash pins the digest's definition: xxh64 of
// the tag (table, ':', one kind code for the key and each field), a zero
// byte, then each value tagged (0 NULL, 1 int, 2 float, 3 text with its
// length), as rowdigest.go documents it.
func TestRowDigestIsTheDocumentedHash(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", map[string]any{"name": "x", "altitude": int64(-3), "latitude": 0.5}, 1)}))
	var d xxhash.Digest
	d.Reset()
	d.WriteString("Airport:ssifbts\x00")
	text := func(s string) {
		d.Write(append([]byte{3}, binary.BigEndian.AppendUint64(nil, uint64(len(s)))...))
		d.WriteString(s)
	}
	text("A")
	text("x")
	d.Write(append([]byte{1}, binary.BigEndian.AppendUint64(nil, uint64(math.MaxUint64-2))...)) // int64(-3)
	d.Write(append([]byte{2}, binary.BigEndian.AppendUint64(nil, math.Float64bits(0.5))...))
	d.Write([]byte{0, 0, 0}) // active, checked, notes: NULL
	want := strconv.FormatInt(int64(d.Sum64()), 10)
	wantRows(t, "digest", query(t, p.Path(), `SELECT hk_digest FROM "Airport"`), want)
}

// TestRowDigestHoldsOnEveryWritePath: creates with every kind, a -0
// float, NULLs, updates of some fields, an upsert without columns, a
// remove and a re-create all leave rows whose digests verify.
func TestRowDigestHoldsOnEveryWritePath(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	must(t, p.Apply([]events.Event{
		h.created("Airport", "A", goroka(), 1),
		h.created("Airport", "B", map[string]any{"name": "Caf\u00e9", "latitude": math.Copysign(0, -1), "checked": nil}, 1),
		h.created("Airport", "C", map[string]any{}, 1),
	}))
	must(t, p.Apply([]events.Event{
		h.persisted("Airport", "A", false, map[string]any{"altitude": int64(1), "checked": nil}, map[string]uint64{"altitude": 2, "checked": 2}),
		h.persisted("Airport", "B", false, map[string]any{"active": true, "legacy": "not a column"}, map[string]uint64{"active": 2, "legacy": 1}),
		h.removed("Airport", "C"),
	}))
	must(t, p.Apply([]events.Event{h.created("Airport", "C", map[string]any{"notes": "back"}, 2)}))
	n, bad, err := projector.VerifyRows(p.Path(), testEntities(), 10)
	if err != nil || n != 3 || len(bad) != 0 {
		t.Fatalf("VerifyRows = %d rows, %v, %v", n, bad, err)
	}
	rows, err := selectAll(t, p.Path())
	must(t, err)
	if len(rows) != 3 || rows[0][2] != int64(1) || rows[1][4] != true || rows[2][6] != "back" {
		t.Fatalf("rows %v", rows)
	}
}

// TestRowChangedOutsideTheStoreIsReadModelCorrupt: an UPDATE that does
// not recompute hk_digest, or a byte of a value made invalid UTF-8, fails
// every read of that row with *CorruptRowError (read_model_corrupt) and no
// value; VerifyRows names the row; the other rows still read.
func TestRowChangedOutsideTheStoreIsReadModelCorrupt(t *testing.T) {
	for name, q := range map[string]string{
		"update":       `UPDATE "Airport" SET altitude = 1 WHERE id = 'A'`,
		"invalid utf8": `UPDATE "Airport" SET name = CAST(X'476FFF726F6B61' AS TEXT) WHERE id = 'A'`,
		"null digest":  `UPDATE "Airport" SET hk_digest = NULL WHERE id = 'A'`,
		"inserted row": `INSERT INTO "Airport" (id, name) VALUES ('Z', 'planted')`,
	} {
		t.Run(name, func(t *testing.T) {
			p := openFresh(t)
			h := newHistory()
			must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1), h.created("Airport", "M", goroka(), 1)}))
			exec(t, p.Path(), q)
			key := "A"
			if name == "inserted row" {
				key = "Z"
			}
			vals, ok, err := p.EntityValues("Airport", key)
			var cre *projector.CorruptRowError
			if !errors.As(err, &cre) || !errors.Is(err, projector.ErrReadModelCorrupt) || vals != nil || ok || cre.Key != key {
				t.Fatalf("EntityValues = %v, %v, %v", vals, ok, err)
			}
			if rows, err := selectAll(t, p.Path()); !errors.Is(err, projector.ErrReadModelCorrupt) || !utf8.ValidString(err.Error()) {
				t.Fatalf("Select = %v, %v", rows, err)
			}
			if _, ok, err := p.EntityValues("Airport", "M"); err != nil || !ok {
				t.Fatalf("the intact row: %v %v", ok, err)
			}
			_, bad, err := projector.VerifyRows(p.Path(), testEntities(), 10)
			if err != nil || len(bad) != 1 || bad[0].Table != "Airport" || bad[0].Key != key {
				t.Fatalf("VerifyRows: %v, %v", bad, err)
			}
		})
	}
}

// TestTableDigestsNameTheTableThatDiffers: a deleted row changes its own
// table's digest only.
func TestTableDigestsNameTheTableThatDiffers(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", goroka(), 1)}))
	before, err := projector.TableDigests(p.Path())
	must(t, err)
	exec(t, p.Path(), `DELETE FROM "Airport" WHERE id = 'B'`)
	after, err := projector.TableDigests(p.Path())
	must(t, err)
	if len(before) != len(after) || len(before) < 5 {
		t.Fatalf("tables %v / %v", before, after)
	}
	for table, d := range before {
		if changed := after[table] != d; changed != (table == "Airport") {
			t.Errorf("table %s: changed = %v", table, changed)
		}
	}
}

// TestDamagedFileIsReadModelInvalidOrCorrupt: a file that is not a
// database is ErrReadModelInvalid at Open (the store rebuilds it), never a
// raw SQLite error.
func TestDamagedFileIsReadModelInvalidOrCorrupt(t *testing.T) {
	p := openFresh(t)
	path := p.Path()
	must(t, p.Close())
	garbage := make([]byte, 8192)
	for i := range garbage {
		garbage[i] = byte(i * 7)
	}
	must(t, os.WriteFile(path, garbage, 0o600))
	if _, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: testEntities()}); !errors.Is(err, projector.ErrReadModelInvalid) {
		t.Fatalf("Open of garbage: %v", err)
	}
}

// TestDamagedSchemaIsReadModelInvalid: a CREATE statement changed inside
// sqlite_master (one column renamed) is found at Open, before any
// statement fails on it.
func TestDamagedSchemaIsReadModelInvalid(t *testing.T) {
	p := openFresh(t)
	path := p.Path()
	must(t, p.Close())
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	must(t, err)
	must(t, sqlitex.ExecuteScript(conn, `PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql, '"notes"', '"notez"') WHERE name = 'Airport';`, nil))
	must(t, conn.Close())
	_, err = projector.Open(path, projector.Options{StoreID: storeID, Entities: testEntities()})
	if !errors.Is(err, projector.ErrReadModelInvalid) || !strings.Contains(err.Error(), "schema differs") {
		t.Fatalf("Open of a damaged schema: %v", err)
	}
}

// TestRowDigestOfAFullRowEqualsTheSQLFunctions: a create binding every
// column (whose digest the projector computes in Go) stores the digest
// hk_row_digest computes for the same row written in two partial upserts,
// for every kind, a NULL and a -0 float.
func TestRowDigestOfAFullRowEqualsTheSQLFunctions(t *testing.T) {
	rows := []map[string]any{goroka(), {"name": "Caf\u00e9", "altitude": int64(-1), "latitude": math.Copysign(0, -1),
		"active": false, "checked": nil, "notes": ""}}
	for i, full := range rows {
		whole, parts := openFresh(t), openFresh(t)
		h1, h2 := newHistory(), newHistory()
		must(t, whole.Apply([]events.Event{h1.created("Airport", "A", full, 1)}))
		first, rest := map[string]any{}, map[string]any{}
		for k, v := range full {
			if k == "name" || k == "active" {
				first[k] = v
			} else {
				rest[k] = v
			}
		}
		must(t, parts.Apply([]events.Event{h2.created("Airport", "A", first, 1)}))
		must(t, parts.Apply([]events.Event{h2.persisted("Airport", "A", false, rest, revsOf(rest, 1))}))
		q := `SELECT hk_digest FROM "Airport"`
		if got, want := query(t, whole.Path(), q), query(t, parts.Path(), q); len(got) != 1 || len(want) != 1 || got[0] != want[0] {
			t.Errorf("row %d: full-row digest %v, SQL function's %v", i, got, want)
		}
		if _, err := selectAll(t, whole.Path()); err != nil {
			t.Errorf("row %d: %v", i, err)
		}
	}
}

func revsOf(fields map[string]any, rev uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k := range fields {
		out[k] = rev
	}
	return out
}
