package replaytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// logHead returns the head sequence of a committed log (opened read-only).
func logHead(t testing.TB, dir string) uint64 {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	head, err := l.Head()
	must(t, err)
	return head
}

// TestGoldenReplayOfCommittedLogs replays every committed log into a fresh
// read model and compares its dump with testdata/golden/<name>.txt. The
// schema_v1 log is replayed from a copy whose audit.note record is
// rewritten into a no-op catalogue event (see unknownSeq); the log as
// recorded fails (TestSchemaV1UnknownEventTypeFailsReplay).
func TestGoldenReplayOfCommittedLogs(t *testing.T) {
	for _, name := range recordedLogs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := replayable(t, name)
			rm, cp := replayed(t, dir)
			if head := logHead(t, dir); cp != head || cp == 0 {
				t.Fatalf("replay reached checkpoint %d, log head is %d", cp, head)
			}
			compareGolden(t, goldenPath(name), dump(t, rm))
		})
	}
}

// TestReplayIsDeterministic replays each committed log twice (once from a
// copy in another directory): the dumps are byte-identical and the digests
// equal. A partial replay (UpTo) is deterministic too, and differs from
// the full one. The schema_v1 log is replayed from two independently
// rewritten copies (see unknownSeq).
func TestReplayIsDeterministic(t *testing.T) {
	for _, name := range recordedLogs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := replayable(t, name)
			rm1, cp1 := replayed(t, dir)
			rm2, cp2 := replayed(t, replayableCopy(t, name))
			d1, d2 := dump(t, rm1), dump(t, rm2)
			if cp1 != cp2 || !bytes.Equal(d1, d2) {
				t.Fatalf("two replays differ (checkpoints %d, %d):\n%s", cp1, cp2, lineDiff(d1, d2))
			}
			if g1, g2 := digest(t, rm1), digest(t, rm2); g1 != g2 {
				t.Fatalf("digests differ: %s vs %s", g1, g2)
			}
			half := cp1 / 2
			var parts [2]string
			for i := range parts {
				target := filepath.Join(t.TempDir(), "partial.sqlite")
				cp, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{UpTo: half}, airportDef())
				must(t, err)
				if cp != half {
					t.Fatalf("partial replay reached %d, want %d", cp, half)
				}
				parts[i] = digest(t, target)
			}
			if parts[0] != parts[1] || parts[0] == digest(t, rm1) {
				t.Fatalf("partial replays: %s, %s; full: %s", parts[0], parts[1], digest(t, rm1))
			}
		})
	}
}

// queryRows runs q on the read model and returns each row as "a|b|c"
// with NULL for nulls.
func queryRows(t testing.TB, readModel, q string, args ...any) []string {
	t.Helper()
	conn, err := sqlite.OpenConn(readModel, sqlite.OpenReadOnly)
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
		t.Errorf("%s: got %d rows %q, want %q", what, len(got), got, want)
		return
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: row %d = %q, want %q", what, i, got[i], want[i])
		}
	}
}

// TestAirportsLogReplaysItsHistory checks rows of the airports log's
// replay against the history genAirports wrote, independently of the golden.
func TestAirportsLogReplaysItsHistory(t *testing.T) {
	rm, _ := replayed(t, logDir("airports"))
	q := func(sql string, args ...any) []string { return queryRows(t, rm, sql, args...) }

	wantRows(t, "row count", q(`SELECT count(*) FROM "Airport"`), "48") // 50 - 3 removed + re-created 5 + new 9001 - removed 41
	wantRows(t, "removed airports", q(`SELECT id FROM "Airport" WHERE id IN ('6', '40', '41') ORDER BY id`))
	wantRows(t, "re-created airport 5", q(`SELECT name, altitude, notes, checked FROM "Airport" WHERE id = '5'`),
		"Port Moresby Jacksons (re-created)|147|re-created|2026-01-15T11:00:00.000Z")
	// Revisions continue across remove + re-create: name 1 → 2, altitude 1 → 2 (re-create) → 3.
	wantRows(t, "airport 5 state", q(`SELECT field, revision FROM hk_field_state WHERE entity = 'Airport' AND id = '5' AND field IN ('name', 'altitude', 'tz') ORDER BY field`),
		"altitude|3", "name|2", "tz|2")
	wantRows(t, "airport 5 stream", q(`SELECT version, removed FROM hk_entity_state WHERE entity = 'Airport' AND id = '5'`), "4|0")
	wantRows(t, "removed airport 6 keeps revisions, clears hashes",
		q(`SELECT removed, (SELECT count(*) FROM hk_field_state f WHERE f.entity = s.entity AND f.id = s.id AND f.value_hash = '' AND f.revision = 1) FROM hk_entity_state s WHERE entity = 'Airport' AND id = '6'`),
		"1|11")
	wantRows(t, "nullable time cleared and set", q(`SELECT id, checked FROM "Airport" WHERE id IN ('1', '2', '6', '11') ORDER BY id`),
		"1|NULL", "11|2026-01-04T09:00:00.123Z", "2|2026-01-15T09:30:00.000Z")
	wantRows(t, "text stays text", q(`SELECT typeof(notes), notes FROM "Airport" WHERE id = '3'`), "text|00123")
	wantRows(t, "NFD names stored NFC", q(`SELECT id, name, city FROM "Airport" WHERE id IN ('7', '13', '9001') ORDER BY id`),
		"13|Hornafj\u00f6r\u00f0ur Airport|Hofn", "7|Narsarsuaq Caf\u00e9|Narssarssuaq", "9001|Z\u00fcrich Test Field|Z\u00fcrich")
	// Unchanged persists (NFD retype of 13, untouched 10–14, 42) wrote no event.
	wantRows(t, "unchanged persists", q(`SELECT id, version FROM hk_entity_state WHERE entity = 'Airport' AND id IN ('10', '12', '13', '42') ORDER BY id`),
		"10|1", "12|1", "13|1", "42|1")
	wantRows(t, "altitude updates", q(`SELECT id, altitude FROM "Airport" WHERE id IN ('1', '8', '50') ORDER BY id`), "1|5283", "50|33", "8|284")
	wantRows(t, "lease history", q(`SELECT type, epoch, state FROM hk_lease_history ORDER BY seq`),
		leaseRow(events.TypeLeaseAcquired, 1, "held"), leaseRow(events.TypeLeaseReleased, 1, "released"),
		leaseRow(events.TypeLeaseAcquired, 2, "held"), leaseRow(events.TypeLeaseReleased, 2, "released"))
	wantRows(t, "lease", q(`SELECT role, epoch, state, operation FROM hk_lease`), "writer|2|released|gen-airports")
}

// TestSchemaV1LogIsUpcastOnReplay: the schema_v1 log really stores
// schema-1 payloads in the old shape; read through the catalogue they are
// typed schema-2 events.EntityPersisted, and the replayed read model shows
// the fields under the new shape with the right created/revision state.
func TestSchemaV1LogIsUpcastOnReplay(t *testing.T) {
	dir := logDir("schema_v1")
	v1, persisted := 0, 0
	for _, r := range rawRecords(t, dir) {
		if r.Type != events.TypeEntityPersisted {
			continue
		}
		persisted++
		e, err := events.DecodeRecord(r.Seq, r.Bytes)
		must(t, err)
		u, ok := e.Payload.(events.EntityPersisted)
		if !ok {
			t.Fatalf("seq %d decodes as %T, not events.EntityPersisted", r.Seq, e.Payload)
		}
		if r.Schema != 1 {
			continue
		}
		v1++
		raw := canonicalMap(t, r)
		if _, ok := raw["values"]; !ok || raw["fields"] != nil || raw["created"] != nil {
			t.Fatalf("seq %d is schema 1 but not in the old shape: %v", r.Seq, raw)
		}
		if u.Fields == nil || !reflect.DeepEqual(u.Fields, raw["values"]) || !reflect.DeepEqual(revisionsAny(u.Revisions), raw["revisions"]) {
			t.Fatalf("seq %d not upcast: %+v from %v", r.Seq, u, raw)
		}
		wantCreated := r.Stream != events.EntityStream("Airport", "1") || r.Version == 1
		if u.Created != wantCreated {
			t.Errorf("seq %d %s v%d upcast created=%v, want %v", r.Seq, r.Stream, r.Version, u.Created, wantCreated)
		}
	}
	if v1 != 5 || persisted != 9 {
		t.Fatalf("schema_v1 log has %d schema-1 of %d %s events, want 5 of 9", v1, persisted, events.TypeEntityPersisted)
	}

	dir = replayableCopy(t, "schema_v1")
	rm, _ := replayed(t, dir)
	q := func(sql string, args ...any) []string { return queryRows(t, rm, sql, args...) }
	// Airport 1: schema-1 create, schema-1 update, schema-2 update.
	wantRows(t, "airport 1 row", q(`SELECT name, altitude, notes, checked, active, iata FROM "Airport" WHERE id = '1'`),
		"Goroka Airport|5283|v1 note|NULL|0|GKA")
	wantRows(t, "airport 1 state", q(`SELECT field, revision, owner FROM hk_field_state WHERE entity = 'Airport' AND id = '1' ORDER BY field`),
		"active|2|system", "altitude|2|system", "checked|2|system", "city|1|system", "country|1|system", "iata|1|system",
		"latitude|1|system", "longitude|1|system", "name|1|system", "notes|2|user", "tz|1|system")
	wantRows(t, "airport 1 stream", q(`SELECT version, removed FROM hk_entity_state WHERE entity = 'Airport' AND id = '1'`), "3|0")
	// Airport 2: schema-1 create, then a schema-2 update of one field keeps the others.
	wantRows(t, "airport 2 row", q(`SELECT name, city, altitude, checked FROM "Airport" WHERE id = '2'`), "Madang (schema 2)|Madang|20|NULL")
	// Airport 3: schema-1 create (NFD written, NFC stored), removed, schema-2 re-create.
	wantRows(t, "airport 3 row", q(`SELECT name, city FROM "Airport" WHERE id = '3'`), "Caf\u00e9 Field (re-created)|Reykjav\u00edk")
	wantRows(t, "airport 3 state", q(`SELECT version, removed, (SELECT min(revision) || '-' || max(revision) FROM hk_field_state f WHERE f.entity = 'Airport' AND f.id = '3') FROM hk_entity_state WHERE entity = 'Airport' AND id = '3'`),
		"3|0|2-2")
	// Runway is not declared: its canonical state is tracked, no table.
	wantRows(t, "undeclared entity", q(`SELECT entity, id, version FROM hk_entity_state WHERE entity = 'Runway'`), "Runway|1-09|1")
	wantRows(t, "no Runway table", q(`SELECT count(*) FROM sqlite_master WHERE name = 'Runway'`), "0")
	wantRows(t, "rows", q(`SELECT id FROM "Airport" ORDER BY id`), "1", "2", "3", "4")
	// The dead old build's lease.toml was reconciled by the takeover.
	wantRows(t, "lease history", q(`SELECT type, epoch, state FROM hk_lease_history ORDER BY seq`),
		leaseRow(events.TypeLeaseAcquired, 1, "held"), leaseRow(events.TypeLeaseReconciled, 2, "reconciled"),
		leaseRow(events.TypeLeaseTakenOver, 2, "held"), leaseRow(events.TypeLeaseReleased, 2, "released"))
}

// flipRecord rewrites the stored record of seq in dir's log.db with fn.
func flipRecord(t *testing.T, dir string, seq uint64, fn func(records *bolt.Bucket, key, val []byte) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, &bolt.Options{Timeout: time.Second})
	must(t, err)
	defer db.Close()
	must(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		key := make([]byte, 8)
		for i := range 8 {
			key[7-i] = byte(seq >> (8 * i))
		}
		v := b.Get(key)
		if v == nil {
			t.Fatalf("no record at seq %d", seq)
		}
		return fn(b, key, bytes.Clone(v))
	}))
}

// TestCorruptRecordFailsReplayWithItsSequence damages one record of a copy
// of each committed log (for schema_v1, a copy whose audit.note record is
// rewritten, see unknownSeq): replay fails with *events.CorruptRecordError
// naming that sequence, and never applies anything past it.
func TestCorruptRecordFailsReplayWithItsSequence(t *testing.T) {
	const seq = 10
	damages := map[string]func(b *bolt.Bucket, key, val []byte) error{
		"flipped payload byte": func(b *bolt.Bucket, key, val []byte) error {
			val[len(val)/2] ^= 0x20
			return b.Put(key, val)
		},
		"flipped checksum byte": func(b *bolt.Bucket, key, val []byte) error {
			val[len(val)-1] ^= 0x01
			return b.Put(key, val)
		},
		"truncated record": func(b *bolt.Bucket, key, val []byte) error {
			return b.Put(key, val[:len(val)/3])
		},
		"record of another sequence": func(b *bolt.Bucket, key, _ []byte) error {
			next := bytes.Clone(key)
			next[7]++
			return b.Put(key, bytes.Clone(b.Get(next)))
		},
	}
	for _, name := range recordedLogs {
		for what, damage := range damages {
			t.Run(name+"/"+what, func(t *testing.T) {
				t.Parallel()
				dir := replayableCopy(t, name)
				flipRecord(t, dir, seq, damage)
				target := filepath.Join(t.TempDir(), "replayed.sqlite")
				cp, err := hikoutei.Replay(t.Context(), dir, target, hikoutei.ReplayOptions{}, airportDef())
				var cre *events.CorruptRecordError
				if !errors.As(err, &cre) || !errors.Is(err, events.ErrCorruptRecord) {
					t.Fatalf("replay of a damaged log: checkpoint %d, err %v", cp, err)
				}
				if cre.Seq != seq || cp >= seq {
					t.Fatalf("error names seq %d (%v), checkpoint %d; want seq %d and a checkpoint below it", cre.Seq, err, cp, seq)
				}
			})
		}
	}
}

// TestI23_LiveStoreOnCommittedLogEqualsReplay opens a copy of each
// committed log as a live store (no read.sqlite: it rebuilds from the log,
// upcasting the old events), commits more through the public API on top
// of the replayed state, and checks that the live read model equals a
// replay of the same log up to the same checkpoint. The schema_v1 copy has
// its audit.note record rewritten (see unknownSeq).
func TestI23_LiveStoreOnCommittedLogEqualsReplay(t *testing.T) {
	ctx := context.Background()
	for _, name := range recordedLogs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := replayableCopy(t, name)
			head := logHead(t, dir)
			clock := events.NewManualClock(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
			var phases []hikoutei.Progress
			s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1,
				Progress: func(p hikoutei.Progress) { phases = append(phases, p) }}, airportDef())
			must(t, err)
			defer s.Close()
			if len(phases) == 0 || phases[0].Phase != "rebuild" || phases[len(phases)-1].Done != phases[len(phases)-1].Total {
				t.Fatalf("open on a log without read model: progress %+v", phases)
			}

			// A further commit decides against the rebuilt (upcast) state:
			// airport 1's altitude continues its revision.
			a, err := hikoutei.Get[Airport](ctx, s, "1")
			must(t, err)
			a.Altitude += 1000
			u := s.Begin()
			must(t, u.Persist(a))
			res, err := u.Commit(ctx)
			must(t, err)
			if res.Events != 1 || res.FirstSeq <= head {
				t.Fatalf("commit on the replayed state: %+v (log head was %d)", res, head)
			}
			// Both logs changed airport 1's altitude once after its create.
			wantRows(t, "altitude revision", queryRows(t, s.ReadModelPath(),
				`SELECT revision FROM hk_field_state WHERE entity = 'Airport' AND id = '1' AND field = 'altitude'`), "3")

			st, err := s.Stats(ctx)
			must(t, err)
			live, liveDump, n := digest(t, s.ReadModelPath()), dump(t, s.ReadModelPath()), st.Checkpoint
			must(t, s.Close())
			target := filepath.Join(t.TempDir(), "replayed.sqlite")
			cp, err := hikoutei.Replay(ctx, dir, target, hikoutei.ReplayOptions{UpTo: n}, airportDef())
			must(t, err)
			if cp != n {
				t.Fatalf("replay reached %d, live checkpoint %d", cp, n)
			}
			if rebuilt := digest(t, target); rebuilt != live {
				t.Fatalf("live %s != replayed %s:\n%s", live, rebuilt, lineDiff(liveDump, dump(t, target)))
			}
		})
	}
}

// leaseRow is one hk_lease_history row as wantRows renders it.
func leaseRow(t events.Type, epoch int, state string) string {
	return fmt.Sprintf("%s|%d|%s", t, epoch, state)
}
