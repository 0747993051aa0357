package projector_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// update rewrites testdata/golden/*.txt: go test ./projector/ -update
var update = flag.Bool("update", false, "rewrite testdata/golden/*.txt")

const storeID = "store0test01"

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// airportShape is the entity the tests project into: one field of every
// kind, a nullable time and a user-owned field.
func airportShape() events.EntityShape {
	return events.EntityShape{Name: "Airport", PK: "id", Fields: []events.FieldShape{
		{Name: "name", Kind: events.KindString, Owner: events.OwnerSystem},
		{Name: "altitude", Kind: events.KindInt, Owner: events.OwnerSystem},
		{Name: "latitude", Kind: events.KindFloat, Owner: events.OwnerSystem},
		{Name: "active", Kind: events.KindBool, Owner: events.OwnerSystem},
		{Name: "checked", Kind: events.KindTime, Nullable: true, Owner: events.OwnerSystem},
		{Name: "notes", Kind: events.KindString, Owner: events.OwnerUser},
	}}
}

// runwayShape is a second entity, declared only by some tests.
func runwayShape() events.EntityShape {
	return events.EntityShape{Name: "Runway", PK: "key", Fields: []events.FieldShape{
		{Name: "surface", Kind: events.KindString, Owner: events.OwnerSystem}}}
}

func testEntities() []events.EntityShape {
	return []events.EntityShape{airportShape()}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// openAt opens (or creates) a read model at path with the test schema.
func openAt(t testing.TB, path string) *projector.Projector {
	t.Helper()
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: testEntities()})
	must(t, err)
	return p
}

// openFresh opens a new read model in a temp dir; it is closed at cleanup.
func openFresh(t testing.TB) *projector.Projector {
	t.Helper()
	p := openAt(t, filepath.Join(t.TempDir(), projector.FileName))
	t.Cleanup(func() { p.Close() })
	return p
}

// history hands out stamped events: dense global seqs, per-stream
// versions, one second apart on the clock — what the log would stamp.
type history struct {
	seq      uint64
	versions map[string]uint64
}

func newHistory() *history { return &history{versions: map[string]uint64{}} }

// next stamps an event of stream carrying payload p.
func (h *history) next(stream string, p events.Payload) events.Event {
	h.seq++
	h.versions[stream]++
	return events.Event{Seq: h.seq, Stream: stream, Version: h.versions[stream], At: t0.Add(time.Duration(h.seq) * time.Second),
		Epoch: 1, Token: "tok", Commit: "c" + strconv.FormatUint(h.seq, 10), Payload: p}
}

// persisted is an entity.persisted event. revs maps each field to its
// revision.
func (h *history) persisted(entity, id string, created bool, fields map[string]any, revs map[string]uint64) events.Event {
	return h.next(events.EntityStream(entity, id), events.EntityPersisted{Entity: entity, ID: id, Created: created, Fields: fields, Revisions: revs})
}

// created is a create carrying every field at revision rev.
func (h *history) created(entity, id string, fields map[string]any, rev uint64) events.Event {
	revs := map[string]uint64{}
	for k := range fields {
		revs[k] = rev
	}
	return h.persisted(entity, id, true, fields, revs)
}

func (h *history) removed(entity, id string) events.Event {
	return h.next(events.EntityStream(entity, id), events.EntityRemoved{Entity: entity, ID: id})
}

// lease is a lease event of the writer role appended at epoch.
func (h *history) lease(epoch uint64, p events.Payload) events.Event {
	e := h.next(events.LeaseStream("writer"), p)
	e.Epoch = epoch
	return e
}

func dump(t testing.TB, path string) []byte {
	t.Helper()
	var b bytes.Buffer
	must(t, projector.Dump(path, &b))
	return b.Bytes()
}

func digest(t testing.TB, path string) string {
	t.Helper()
	d, err := projector.Digest(path)
	must(t, err)
	return d
}

func compareGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	got = withoutEmptyTables(got)
	path := filepath.Join("testdata", "golden", name+".txt")
	if *update {
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("dump differs from %s (run with -update if intended):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// query runs q on a separate read-only connection and returns each row as
// "a|b|c" (NULL for nulls).
func query(t testing.TB, path, q string, args ...any) []string {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	must(t, err)
	defer conn.Close()
	var out []string
	must(t, sqlitex.Execute(conn, q, &sqlitex.ExecOptions{Args: args, ResultFunc: func(s *sqlite.Stmt) error {
		var b bytes.Buffer
		for i := range s.ColumnCount() {
			if i > 0 {
				b.WriteByte('|')
			}
			if s.ColumnType(i) == sqlite.TypeNull {
				b.WriteString("NULL")
			} else {
				b.WriteString(s.ColumnText(i))
			}
		}
		out = append(out, b.String())
		return nil
	}}))
	return out
}

func wantRows(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: got %q, want %q", what, got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: row %d = %q, want %q", what, i, got[i], want[i])
		}
	}
}

// withoutEmptyTables drops the sections of tables that have no rows from
// a Dump. The goldens pin what a history puts into the read model; the
// column lists of tables it leaves empty (hk_outbox, hk_conflicts, … owned
// by other projections and still growing) are not part of that, so their
// migrations do not churn these goldens. Tables with rows keep their
// header, and a table that gains rows shows up in the diff.
func withoutEmptyTables(dump []byte) []byte {
	lines := strings.SplitAfter(string(dump), "\n")
	var out strings.Builder
	for i := 0; i < len(lines); i++ {
		if strings.HasPrefix(lines[i], "== ") &&
			(i+2 >= len(lines) || strings.HasPrefix(lines[i+2], "== ") || lines[i+2] == "") {
			i++ // skip the section title and its column header
			continue
		}
		out.WriteString(lines[i])
	}
	return []byte(out.String())
}
