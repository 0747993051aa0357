package projector_test

import (
	"context"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Benchmarks of the projector's apply path and of the key lookup behind
// Get, to measure what the per-row digests cost:
//
//	go test -run '^$' -bench 'Apply|SelectByKey' -benchmem -count 5 ./projector/
//
// One op is one event applied (batches of benchBatch) or one row read.

const benchBatch = 256

// BenchmarkApplyCreate applies entity.persisted creates carrying every
// field (the row upsert's INSERT path).
func BenchmarkApplyCreate(b *testing.B) {
	p := openFresh(b)
	h := newHistory()
	b.ResetTimer()
	for done := 0; done < b.N; done += benchBatch {
		batch := make([]events.Event, 0, benchBatch)
		for i := done; i < min(done+benchBatch, b.N); i++ {
			batch = append(batch, h.created("Airport", "a"+strconv.Itoa(i), goroka(), 1))
		}
		must(b, p.Apply(batch))
	}
}

// BenchmarkApplyUpdate applies updates carrying one changed field of
// existing rows (the upsert's DO UPDATE path, which keeps the other
// columns).
func BenchmarkApplyUpdate(b *testing.B) {
	const rows = 1024
	p := openFresh(b)
	h := newHistory()
	seed := make([]events.Event, 0, rows)
	for i := range rows {
		seed = append(seed, h.created("Airport", "a"+strconv.Itoa(i), goroka(), 1))
	}
	must(b, p.Apply(seed))
	b.ResetTimer()
	for done := 0; done < b.N; done += benchBatch {
		batch := make([]events.Event, 0, benchBatch)
		for i := done; i < min(done+benchBatch, b.N); i++ {
			rev := uint64(i/rows + 2)
			batch = append(batch, h.persisted("Airport", "a"+strconv.Itoa(i%rows), false,
				map[string]any{"altitude": int64(i)}, map[string]uint64{"altitude": rev}))
		}
		must(b, p.Apply(batch))
	}
}

// BenchmarkSelectByKey reads one row by primary key on a read-only
// connection, as Get does.
func BenchmarkSelectByKey(b *testing.B) {
	const rows = 4096
	p := openFresh(b)
	h := newHistory()
	for start := 0; start < rows; start += benchBatch {
		batch := make([]events.Event, 0, benchBatch)
		for i := start; i < start+benchBatch; i++ {
			batch = append(batch, h.created("Airport", "a"+strconv.Itoa(i), goroka(), 1))
		}
		must(b, p.Apply(batch))
	}
	pool, err := sqlitex.NewPool(p.Path(), sqlitex.PoolOptions{Flags: sqlite.OpenReadOnly, PoolSize: 1})
	must(b, err)
	defer pool.Close()
	conn, err := pool.Take(context.Background())
	must(b, err)
	defer pool.Put(conn)
	b.ResetTimer()
	for i := range b.N {
		n := 0
		q := projector.Query{Where: []projector.Cond{{Field: "id", Value: "a" + strconv.Itoa(i%rows)}}, Limit: 1}
		must(b, projector.Select(conn, airportShape(), q, func([]any) error { n++; return nil }))
		if n != 1 {
			b.Fatalf("read %d rows", n)
		}
	}
}

// BenchmarkSyncFactsWithSupersededHistory measures SyncFacts (what sync
// health reads) over a read model holding 200,000 superseded effects
// (never pruned) of which 10 no correction replaced, with the partial
// index hk_outbox_dropped and without it (as before schema version 7).
func BenchmarkSyncFactsWithSupersededHistory(b *testing.B) {
	path := filepath.Join(b.TempDir(), projector.FileName)
	must(b, openAt(b, path).Close())
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	must(b, err)
	defer conn.Close()
	must(b, sqlitex.ExecuteScript(conn, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000)
INSERT INTO hk_outbox (effect_id, spreadsheet, tab, anchor, binding, stream_sequence, op, payload, payload_hash, entity, entity_id,
  state, superseded_by, version, queued_seq, updated_seq)
SELECT 'fx' || i, 't', 'Airport_System', 'a' || (i % 4999), 'b' || (i % 4999), i, 'update', x'', '', 'Airport', 'a' || (i % 4999),
  'superseded', CASE WHEN i % 20000 = 0 THEN '' ELSE 'fy' || i END, 1, i, i FROM n;
WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 4998)
INSERT INTO hk_visible_state (binding, tab, anchor, revision, hash, effect_id, seq) SELECT 'b' || i, 'Airport_System', 'a' || i, 1, 'h', '', 1 FROM n;`, nil))
	for _, c := range []struct{ name, setup string }{{"partial_index", ""}, {"no_partial_index", "DROP INDEX hk_outbox_dropped"}} {
		if c.setup != "" {
			must(b, sqlitex.ExecuteTransient(conn, c.setup, nil))
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				facts, err := projector.SyncFacts(conn, "t")
				must(b, err)
				if facts["Airport_System"].Dropped != 10 {
					b.Fatalf("dropped %+v", facts["Airport_System"])
				}
			}
		})
	}
}

// BenchmarkEffectLifecycle applies what one synced row costs the outbox:
// effect.queued, then its claim and its applied outcome as the batch
// events the dispatcher commits (effects.claimed, effects.applied on the
// dispatch stream), benchBatch effects per batch. One op is one effect.
func BenchmarkEffectLifecycle(b *testing.B) {
	p := openFresh(b)
	h := newHistory()
	b.ResetTimer()
	c0 := cpuTime(b)
	for done := 0; done < b.N; done += benchBatch {
		queued, attempts, written := lifecycleBatch(h, done, min(benchBatch, b.N-done))
		must(b, p.Apply(queued))
		must(b, p.Apply([]events.Event{h.next(events.DispatchStream("s"), events.EffectsClaimed{ClaimToken: "c", Epoch: 1, Attempts: attempts})}))
		must(b, p.Apply([]events.Event{h.next(events.DispatchStream("s"), events.EffectsApplied{ClaimToken: "c", Via: "dispatch", Written: written})}))
	}
	b.ReportMetric(float64((cpuTime(b)-c0).Microseconds())/float64(b.N), "cpu-us/op")
}

// cpuTime is this process's user + system CPU time so far (the wall time
// of these benchmarks is mostly the disk's).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
