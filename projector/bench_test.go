package projector_test

import (
	"context"
	"strconv"
	"testing"

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
