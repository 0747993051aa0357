package hikoutei

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/fixtures"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Airport is the test entity, shaped like the OpenFlights data set.
type Airport = fixtures.Airport

// City is the GeoNames entity for the scale test and the rebuild benchmarks.
type City = fixtures.City

var ctx = context.Background()

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func openStore(t testing.TB, dir string, opts ...func(*Options)) *Store {
	t.Helper()
	o := Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1}
	for _, f := range opts {
		f(&o)
	}
	s, err := Open(t.Context(), dir, o, Entity[Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func commit(t testing.TB, s *Store, entities ...any) CommitResult {
	t.Helper()
	u := s.Begin()
	for _, e := range entities {
		if err := u.Persist(e); err != nil {
			t.Fatal(err)
		}
	}
	res, err := u.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustT(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func readAirports(t testing.TB) []Airport { return fixtures.Airports(t) }

func readCities(t testing.TB) []City { return fixtures.Cities(t) }

func loadAirports(t testing.TB, s *Store, n int) {
	t.Helper()
	all := readAirports(t)[:n]
	for i := 0; i < len(all); i += 250 {
		u := s.Begin()
		for j := i; j < min(i+250, len(all)); j++ {
			mustT(t, u.Persist(&all[j]))
		}
		_, err := u.Commit(ctx)
		mustT(t, err)
	}
}

// checkpoint is the last log sequence applied to the read model.
func checkpoint(t testing.TB, s *Store) uint64 {
	t.Helper()
	st, err := s.Stats(ctx)
	mustT(t, err)
	return st.Checkpoint
}

// entityRow is an entity's canonical state as the read model stores it.
type entityRow struct {
	Version uint64
	Fields  map[string]projector.FieldRow
}

// fieldState reads an entity's canonical state (its version and each
// field's hash, revision and owner) from read.sqlite, read-only.
func fieldState(t testing.TB, s *Store, entity, id string) entityRow {
	t.Helper()
	conn, err := s.e.ReadConn(ctx)
	mustT(t, err)
	defer s.e.PutConn(conn)
	var row entityRow
	err = sqlitex.Execute(conn, "SELECT version, fields FROM hk_entity_state WHERE entity = ? AND id = ?", &sqlitex.ExecOptions{
		Args: []any{entity, id},
		ResultFunc: func(st *sqlite.Stmt) error {
			row.Version = uint64(st.ColumnInt64(0))
			return json.Unmarshal([]byte(st.ColumnText(1)), &row.Fields)
		}})
	mustT(t, err)
	return row
}

func digest(t testing.TB, path string) string {
	t.Helper()
	d, err := projector.Digest(path)
	mustT(t, err)
	return d
}

func replayDigest(t testing.TB, dir string, upTo uint64) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	cp, err := Replay(t.Context(), dir, target, ReplayOptions{UpTo: upTo}, Entity[Airport]("Airport"))
	mustT(t, err)
	if cp != upTo {
		t.Fatalf("replay reached %d, want %d", cp, upTo)
	}
	return digest(t, target)
}

// removeReadModel deletes a read model file and its WAL files.
func removeReadModel(path string) error {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
