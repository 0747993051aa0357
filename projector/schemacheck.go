package projector

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
)

// checkSchema compares the read model's schema (every table, index and
// view of sqlite_master, with its SQL text) with the one this build
// creates for shapes, built in a private in-memory database: a damaged
// schema (a byte changed in a CREATE statement) would otherwise surface
// as SQL errors on later statements. Errors: ErrReadModelInvalid.
func (p *Projector) checkSchema(shapes []events.EntityShape) error {
	want, err := expectedSchema(shapes)
	if err != nil {
		return fmt.Errorf("%w: build the expected schema: %w", ErrProjection, err)
	}
	got, err := schemaOf(p.conn)
	if err != nil {
		return invalid(err)
	}
	got = storeObjects(got, shapes)
	for i := 0; i < max(len(got), len(want)); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			return fmt.Errorf("%w: its schema differs from this build's (%s)", ErrReadModelInvalid, firstDifference(got, want, i))
		}
	}
	return nil
}

func firstDifference(got, want []string, i int) string {
	switch {
	case i >= len(got):
		return fmt.Sprintf("missing %.60q", want[i])
	case i >= len(want):
		return fmt.Sprintf("unexpected %.60q", got[i])
	}
	return fmt.Sprintf("%.60q instead of %.60q", got[i], want[i])
}

// expectedSchemas holds expectedSchema's answers by the statements that
// build them. A process opens the same declaration again and again (the
// workers restarted, a store closed and opened, every test), and building
// the schema in a scratch database costs more than the rest of Open's
// check. Bounded: emptied when it reaches expectedSchemasMax entries.
var expectedSchemas struct {
	sync.Mutex
	m map[string][]string
}

const expectedSchemasMax = 64

// expectedSchema is schemaOf a fresh read model of shapes (a copy the
// caller may change).
func expectedSchema(shapes []events.EntityShape) ([]string, error) {
	stmts := make([]string, len(shapes))
	for i, t := range shapes {
		stmts[i] = createSQL(t)
	}
	key := strings.Join(stmts, "\x00")
	expectedSchemas.Lock()
	want, ok := expectedSchemas.m[key]
	expectedSchemas.Unlock()
	if !ok {
		var err error
		if want, err = buildSchema(stmts); err != nil {
			return nil, err
		}
		rememberSchema(key, want)
	}
	return slices.Clone(want), nil
}

func rememberSchema(key string, schema []string) {
	expectedSchemas.Lock()
	defer expectedSchemas.Unlock()
	if expectedSchemas.m == nil || len(expectedSchemas.m) >= expectedSchemasMax {
		expectedSchemas.m = map[string][]string{}
	}
	expectedSchemas.m[key] = schema
}

// buildSchema is schemaOf a scratch database made by this build's
// migrations, then stmts.
func buildSchema(stmts []string) ([]string, error) {
	conn, err := sqlite.OpenConn(":memory:", sqlite.OpenReadWrite|sqlite.OpenMemory)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	for _, m := range migrations {
		if err := sqlitex.ExecuteScript(conn, m, nil); err != nil {
			return nil, err
		}
	}
	for _, stmt := range stmts {
		if err := sqlitex.ExecuteScript(conn, stmt, nil); err != nil {
			return nil, err
		}
	}
	return schemaOf(conn)
}

// schemaOf lists sqlite_master as "type name on tbl_name: sql", sorted.
func schemaOf(conn *sqlite.Conn) ([]string, error) {
	var out []string
	err := sqlitex.ExecuteTransient(conn, "SELECT type, name, tbl_name, ifnull(sql, '') FROM sqlite_master", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error {
			out = append(out, fmt.Sprintf("%s %s on %s: %s", s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnText(3)))
			return nil
		}})
	slices.Sort(out)
	return out, err
}

// storeObjects drops from a schema listing the objects of a consumer's own
// tables (a subscription's state kept in this database): only the store's
// tables (storeTable, or hk_subscriptions) are checked.
func storeObjects(schema []string, shapes []events.EntityShape) []string {
	entities := map[string]bool{}
	for _, t := range shapes {
		entities[t.Name] = true
	}
	return slices.DeleteFunc(schema, func(line string) bool {
		_, rest, _ := strings.Cut(line, " on ")
		table, _, _ := strings.Cut(rest, ": ")
		return table != subscriptionsTable && !storeTable(table, entities)
	})
}
