package hikoutei

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Raw baselines for bench_test.go: the same bytes and rows the store writes,
// written by bare bbolt and bare SQLite with none of the store's machinery
// (no fence, no stream index, no decisions, no checkpoint). bbolt is opened
// with its defaults (fsync on every commit); SQLite uses WAL with
// synchronous=NORMAL like the read model.

// rawEntity is one entity as the read model stores it: its key, its column
// values in declaration order and its hk_entity_state.fields JSON.
type rawEntity struct {
	id     string
	values map[string]any // canonical, as Persist hands them to the aggregate
	cols   []any          // values in declaration order (the table's columns)
	fields string         // hk_entity_state.fields after the create
}

// rawEntityOf computes what the store would write for the struct value v.
func rawEntityOf(d *EntityDef, v reflect.Value) (rawEntity, error) {
	id, err := d.key(v)
	if err != nil {
		return rawEntity{}, err
	}
	vals, err := d.values(v, id)
	if err != nil {
		return rawEntity{}, err
	}
	e := rawEntity{id: id, values: vals}
	state := make(map[string]projector.FieldRow, len(d.fields))
	for _, f := range d.fields {
		e.cols = append(e.cols, vals[f.name])
		h, err := events.Hash(vals[f.name])
		if err != nil {
			return rawEntity{}, err
		}
		state[f.name] = projector.FieldRow{Hash: h, Revision: 1, Owner: f.owner}
	}
	js, err := json.Marshal(state)
	e.fields = string(js)
	return e, err
}

var (
	rawAirportsOnce sync.Once
	rawAirportsData []rawEntity
	rawAirportsErr  error
)

// rawAirports returns the raw form of every benchmark airport (by index;
// the key is replaced per record by benchAirport's key).
func rawAirports(b *testing.B) []rawEntity {
	all := benchAirports(b)
	rawAirportsOnce.Do(func() {
		d := Entity[Airport]("Airport")
		for i := range all {
			e, err := rawEntityOf(&d, reflect.ValueOf(&all[i]).Elem())
			if err != nil {
				rawAirportsErr = err
				return
			}
			rawAirportsData = append(rawAirportsData, e)
		}
	})
	if rawAirportsErr != nil {
		b.Fatal(rawAirportsErr)
	}
	return rawAirportsData
}

// benchToken stands in for the lease's fencing token (same length).
const benchToken = "0123456789abcdef0123456789abcdef"

// rawRecords returns the log record bytes of the n creates benchAirport(i)
// would commit (seq i+1, one event per commit), built by the aggregate and
// events.MarshalRecord, and the raw read-model entity of each.
func rawRecords(b *testing.B, n int) ([][]byte, []rawEntity) {
	b.Helper()
	tmpl := rawAirports(b)
	all := benchAirports(b)
	now := time.Now().UTC()
	recs := make([][]byte, n)
	ents := make([]rawEntity, n)
	for i := range n {
		e := tmpl[i%len(tmpl)]
		e.id = benchAirport(all, i).ID
		d, err := aggregates.DecidePersist(aggregates.EntityState{}, aggregates.Persist{Entity: "Airport", ID: e.id, Values: e.values}, now)
		if err != nil || len(d.Events) != 1 {
			b.Fatalf("decide %s: %d events, %v", e.id, len(d.Events), err)
		}
		ev := d.Events[0]
		seq := uint64(i + 1)
		ev.Seq, ev.Stream, ev.Version, ev.Epoch, ev.Token, ev.Commit = seq, d.Stream, 1, 1, benchToken, "c"+strconv.FormatUint(seq, 10)
		if recs[i], err = events.MarshalRecord(ev); err != nil {
			b.Fatal(err)
		}
		ents[i] = e
	}
	return recs, ents
}

func seqKey(seq uint64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq)
}

var rawBucket = []byte("events")

// openRawBolt opens a bbolt file with default options (fsync on) and one
// bucket for the records.
func openRawBolt(b *testing.B) *bolt.DB {
	b.Helper()
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(rawBucket); return err })
	if err != nil {
		b.Fatal(err)
	}
	return db
}

// putRecords appends recs[from:to] under seq keys in ONE Update.
func putRecords(db *bolt.DB, recs [][]byte, from, to int) error {
	return db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(rawBucket)
		for i := from; i < to; i++ {
			if err := bk.Put(seqKey(uint64(i+1)), recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// rawSQLite is a bare SQLite connection holding an entity table and
// hk_entity_state shaped like the read model's.
type rawSQLite struct {
	conn   *sqlite.Conn
	entity string
	insert string
}

func openRawSQLite(path string, d *EntityDef) (*rawSQLite, error) {
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL)
	if err != nil {
		return nil, err
	}
	r := &rawSQLite{conn: conn, entity: d.name}
	cols := []string{fmt.Sprintf("%q TEXT PRIMARY KEY NOT NULL", d.pk.name)}
	names := []string{fmt.Sprintf("%q", d.pk.name)}
	for _, f := range d.fields {
		typ := "TEXT"
		switch f.kind {
		case events.KindInt, events.KindBool:
			typ = "INTEGER"
		case events.KindFloat:
			typ = "REAL"
		}
		cols = append(cols, fmt.Sprintf("%q %s", f.name, typ))
		names = append(names, fmt.Sprintf("%q", f.name))
	}
	r.insert = fmt.Sprintf("INSERT INTO %q (%s) VALUES (?%s)", d.name, strings.Join(names, ", "), strings.Repeat(", ?", len(d.fields)))
	script := []string{
		"PRAGMA journal_mode=WAL",
		"PRAGMA synchronous=NORMAL",
		fmt.Sprintf("CREATE TABLE %q (%s)", d.name, strings.Join(cols, ", ")),
		`CREATE TABLE hk_entity_state (entity TEXT NOT NULL, id TEXT NOT NULL, version INTEGER NOT NULL, removed INTEGER NOT NULL,
  last_seq INTEGER NOT NULL, fields TEXT NOT NULL, PRIMARY KEY (entity, id)) WITHOUT ROWID`,
	}
	for _, q := range script {
		if err := r.exec(q); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return r, nil
}

func (r *rawSQLite) exec(q string) error {
	st := r.conn.Prep(q)
	_, err := st.Step()
	if rerr := st.Reset(); err == nil {
		err = rerr
	}
	return err
}

// insertTx inserts each entity's table row and hk_entity_state row in ONE
// transaction; seq(i) is the log sequence of ents[i].
func (r *rawSQLite) insertTx(ents []rawEntity, seq func(i int) uint64) error {
	if err := r.exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	row := r.conn.Prep(r.insert)
	state := r.conn.Prep("INSERT INTO hk_entity_state (entity, id, version, removed, last_seq, fields) VALUES (?, ?, 1, 0, ?, ?)")
	for i := range ents {
		e := &ents[i]
		row.BindText(1, e.id)
		for j, v := range e.cols {
			projector.BindValue(row, j+2, v)
		}
		if err := stepReset(row); err != nil {
			r.exec("ROLLBACK")
			return err
		}
		state.BindText(1, r.entity)
		state.BindText(2, e.id)
		state.BindInt64(3, int64(seq(i)))
		state.BindText(4, e.fields)
		if err := stepReset(state); err != nil {
			r.exec("ROLLBACK")
			return err
		}
	}
	return r.exec("COMMIT")
}

func stepReset(st *sqlite.Stmt) error {
	_, err := st.Step()
	if rerr := st.Reset(); err == nil {
		err = rerr
	}
	return err
}

// benchmarkRawFloor appends the records by raw bbolt, perTx per Update, and
// writes their rows by raw SQLite, perTx per transaction, on one goroutine.
// One op = one record (and its two rows); every Update is sampled.
func benchmarkRawFloor(b *testing.B, perTx int) []time.Duration {
	warm := benchWarmup * perTx
	recs, ents := rawRecords(b, warm+b.N)
	db := openRawBolt(b)
	defer db.Close()
	d := Entity[Airport]("Airport")
	sq, err := openRawSQLite(filepath.Join(b.TempDir(), "raw.sqlite"), &d)
	if err != nil {
		b.Fatal(err)
	}
	defer sq.conn.Close()
	seq := func(base int) func(int) uint64 { return func(i int) uint64 { return uint64(base + i + 1) } }
	write := func(from, to int) {
		if err := putRecords(db, recs, from, to); err != nil {
			b.Fatal(err)
		}
		if err := sq.insertTx(ents[from:to], seq(from)); err != nil {
			b.Fatal(err)
		}
	}
	for i := 0; i < warm; i += perTx {
		write(i, i+perTx)
	}
	lat := make([]time.Duration, 0, b.N/perTx+1)
	b.ReportAllocs()
	b.ResetTimer()
	m := startMeter()
	for i := warm; i < warm+b.N; i += perTx {
		start := time.Now()
		write(i, min(i+perTx, warm+b.N))
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	m.report(b, float64(b.N), "record")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	return lat
}

// BenchmarkRawFloor64: the floor under BenchmarkCommit64Concurrent — 64
// records per bbolt Update (one fsync) plus their rows in one SQLite
// transaction.
func BenchmarkRawFloor64(b *testing.B) { benchmarkRawFloor(b, benchWriters) }

// BenchmarkRawFloorSingle: the floor under BenchmarkCommitSingle — one
// bbolt Update of one record, then one SQLite transaction of its rows.
func BenchmarkRawFloorSingle(b *testing.B) {
	reportLatency(b, benchmarkRawFloor(b, 1))
}

// BenchmarkBoltBatchDefault64: bbolt's own group commit, db.Batch with its
// defaults (MaxBatchDelay 10 ms, MaxBatchSize 1000), 64 goroutines writing
// one record per call. Log only: no read model.
func BenchmarkBoltBatchDefault64(b *testing.B) {
	recs, _ := rawRecords(b, b.N)
	db := openRawBolt(b)
	defer db.Close()
	b.ReportAllocs()
	b.ResetTimer()
	m := startMeter()
	runWriters(b, func(i int) error {
		return db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(rawBucket).Put(seqKey(uint64(i+1)), recs[i]) })
	})
	b.StopTimer()
	m.report(b, float64(b.N), "record")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}

// rebuildRows returns the raw rows of the rebuild data set and its entity.
func rebuildRows(b *testing.B) (EntityDef, []rawEntity) {
	b.Helper()
	var d EntityDef
	var vals []reflect.Value
	if rebuildData() == "cities" {
		d = Entity[City]("City")
		cities := readCities(b)
		for i := range cities {
			vals = append(vals, reflect.ValueOf(&cities[i]).Elem())
		}
	} else {
		d = Entity[Airport]("Airport")
		airports := benchAirports(b)
		for i := range airports {
			vals = append(vals, reflect.ValueOf(&airports[i]).Elem())
		}
	}
	ents := make([]rawEntity, len(vals))
	for i, v := range vals {
		var err error
		if ents[i], err = rawEntityOf(&d, v); err != nil {
			b.Fatal(err)
		}
	}
	return d, ents
}

// rebuildTxRows is how many rows the raw inserts commit a transaction: the
// events a rebuild's transaction holds before it commits
// (projector/buildtx.go, 16,384), so that the floor and the rebuild pay
// for the same number of commits. It was 2,048 (the engine's read batch)
// until 2026-12-05: the floor then paid 84 commits against the rebuild's
// 11 at 171,075 rows, and 3a compared unlike things.
const rebuildTxRows = 16384

// BenchmarkRawSQLiteInsert: the floor under BenchmarkRebuild — a fresh
// SQLite file (WAL, synchronous=NORMAL) filled with the same rows (each
// entity's table row plus its hk_entity_state row) in transactions of
// rebuildTxRows. One op = one full load; rows/s counts entities (each =
// both rows).
func BenchmarkRawSQLiteInsert(b *testing.B) {
	d, ents := rebuildRows(b)
	out := b.TempDir()
	seq := func(base int) func(int) uint64 { return func(i int) uint64 { return uint64(base + i + 2) } }
	b.ReportAllocs()
	b.ResetTimer()
	m := startMeter()
	for n := 0; n < b.N; n++ {
		path := filepath.Join(out, "raw-"+strconv.Itoa(n)+".sqlite")
		sq, err := openRawSQLite(path, &d)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(ents); i += rebuildTxRows {
			if err := sq.insertTx(ents[i:min(i+rebuildTxRows, len(ents))], seq(i)); err != nil {
				b.Fatal(err)
			}
		}
		if err := sq.conn.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		mustT(b, removeReadModel(path))
		b.StartTimer()
	}
	b.StopTimer()
	m.report(b, float64(len(ents))*float64(b.N), "row")
	b.ReportMetric(float64(len(ents))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
