package events

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Benchmarks of the fenced log beside raw bbolt writing records of the same
// size (the floor any bbolt-backed log pays). Run with `make bench` or
// `go test -run '^$' -bench . ./events/`. All are durable (fsync per commit).

func benchPayload() map[string]any {
	return map[string]any{"iata": "GKA", "name": "Goroka Airport", "city": "Goroka", "country": "Papua New Guinea",
		"lat": -6.081689834590001, "lng": 145.391998291, "alt": int64(5282), "tz": "Pacific/Port_Moresby"}
}

// benchEvent is an entity.persisted of one airport (every field created).
func benchEvent() EntityPersisted {
	p := benchPayload()
	revs := make(map[string]uint64, len(p))
	for k := range p {
		revs[k] = 1
	}
	return EntityPersisted{Entity: "Airport", ID: "GKA", Created: true, Fields: p, Revisions: revs}
}

func benchRecordSize(b *testing.B) int {
	rec, err := MarshalRecord(Event{Seq: 1, Stream: "entity/Airport/GKA", Version: 1, Epoch: 1, Token: newToken(), Commit: "c1",
		Payload: benchEvent()})
	if err != nil {
		b.Fatal(err)
	}
	return len(rec)
}

func benchmarkAppend(b *testing.B, perTx int) {
	l, err := OpenLog(filepath.Join(b.TempDir(), LogFileName), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	f := mustAcquire(b, l).Fence()
	payload := benchEvent()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		evs := make([]Event, perTx)
		for j := range evs {
			evs[j] = Event{Payload: payload}
		}
		u := Unit{Streams: []StreamAppend{{Stream: fmt.Sprintf("entity/Airport/%d", i), ExpectedVersion: 0, Events: evs}}}
		if _, err := l.Append(f, u); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*perTx)/b.Elapsed().Seconds(), "events/s")
}

func mustAcquire(b *testing.B, l *Log) Lease {
	lease, err := l.AcquireLease(AcquireRequest{WriterID: "bench", TTL: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	return lease
}

func BenchmarkAppend1(b *testing.B)   { benchmarkAppend(b, 1) }
func BenchmarkAppend100(b *testing.B) { benchmarkAppend(b, 100) }

// rawBolt writes perTx records of the log's record size per Update.
func benchmarkRawUpdate(b *testing.B, perTx int) {
	db, size := openRawBolt(b)
	defer db.Close()
	val := make([]byte, size)
	var seq uint64
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		err := db.Update(func(tx *bolt.Tx) error {
			bk := tx.Bucket(bucketEvents)
			for range perTx {
				seq++
				if err := bk.Put(u64(seq), val); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*perTx)/b.Elapsed().Seconds(), "events/s")
}

func openRawBolt(b *testing.B) (*bolt.DB, int) {
	size := benchRecordSize(b)
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		b.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket(bucketEvents); return err })
	if err != nil {
		b.Fatal(err)
	}
	return db, size
}

func BenchmarkRawBoltUpdate1(b *testing.B)   { benchmarkRawUpdate(b, 1) }
func BenchmarkRawBoltUpdate100(b *testing.B) { benchmarkRawUpdate(b, 100) }

// BenchmarkRawBoltBatch1 is bbolt's db.Batch (default 10 ms delay) with
// concurrent callers writing one record each.
func BenchmarkRawBoltBatch1(b *testing.B) {
	db, size := openRawBolt(b)
	defer db.Close()
	val := make([]byte, size)
	var seq atomic.Uint64
	b.SetParallelism(32) // 64 callers on 2 cores
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k := u64(seq.Add(1))
			if err := db.Batch(func(tx *bolt.Tx) error { return tx.Bucket(bucketEvents).Put(k, val) }); err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkRawBoltBatch100 is db.Batch where each call writes 100 records.
func BenchmarkRawBoltBatch100(b *testing.B) {
	db, size := openRawBolt(b)
	defer db.Close()
	val := make([]byte, size)
	var seq atomic.Uint64
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			base := seq.Add(100)
			err := db.Batch(func(tx *bolt.Tx) error {
				for j := range uint64(100) {
					if err := tx.Bucket(bucketEvents).Put(u64(base-j), val); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Error(err)
			}
		}
	})
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "events/s")
}

func BenchmarkEncodeCanonical(b *testing.B) {
	p := benchPayload()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := EncodeCanonical(p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeRecord(b *testing.B) {
	rec, err := MarshalRecord(Event{Seq: 1, Stream: "entity/Airport/GKA", Version: 1, Token: newToken(), Payload: benchEvent()})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := DecodeRecord(1, rec); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkAppendChain is benchmarkAppend of 64 events per commit, with
// the hash chain (as every log of this build) or without it (records of
// format 1 or 2, as the build before the chain wrote), durable or not.
func benchmarkAppendChain(b *testing.B, unchained, noSync bool) {
	l, f := openChainLog(b, unchained, noSync)
	payload := benchEvent()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		append64(b, l, f, i, payload)
	}
	b.ReportMetric(float64(b.N*64)/b.Elapsed().Seconds(), "events/s")
}

// openChainLog opens a log in a temporary directory of its own, with the
// hash chain or without it (records of format 1 or 2), durable or not,
// and acquires its writer; the log closes with the benchmark.
func openChainLog(b *testing.B, unchained, noSync bool) (*Log, Fence) {
	l, err := OpenLog(filepath.Join(b.TempDir(), LogFileName), Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	l.unchained = unchained
	return l, mustAcquire(b, l).Fence()
}

// append64 is commit i of the chain benchmarks: 64 one-event streams.
func append64(b *testing.B, l *Log, f Fence, i int, payload EntityPersisted) {
	var u Unit
	for j := range 64 {
		u.Streams = append(u.Streams, StreamAppend{Stream: fmt.Sprintf("entity/Airport/%d-%d", i, j), Events: []Event{{Payload: payload}}})
	}
	if _, err := l.Append(f, u); err != nil {
		b.Fatal(err)
	}
}

// The chain's cost on the commit path: a durable commit of 64 one-event
// streams with and without the chain (the goal: with ÷ without
// ≥ 0.95), and the same without fsync, where the chain's share is largest.
func BenchmarkAppend64Chained(b *testing.B)         { benchmarkAppendChain(b, false, false) }
func BenchmarkAppend64Unchained(b *testing.B)       { benchmarkAppendChain(b, true, false) }
func BenchmarkAppend64ChainedNoSync(b *testing.B)   { benchmarkAppendChain(b, false, true) }
func BenchmarkAppend64UnchainedNoSync(b *testing.B) { benchmarkAppendChain(b, true, true) }

// chainRound is how many commits one side of BenchmarkAppend64ChainAlternating
// makes in a row before the other side takes its turn.
const chainRound = 20

// BenchmarkAppend64ChainAlternating is row 10a of `make bench`: the
// durable commits of BenchmarkAppend64Chained and BenchmarkAppend64Unchained
// in one process, on two logs in temporary directories of their own (one
// chained, one not, both with fsync), so that the disk's drift between two
// processes is not in the ratio. After 5 untimed commits on each log, each
// iteration (b.N counts rounds) is chainRound commits on one log and then
// chainRound on the other, the chained log first in even rounds and second
// in odd ones; each side is timed over its own commits only (their sum over
// the rounds). It reports events/s-chained and events/s-unchained (64 events
// a commit ÷ the side's summed seconds) and their ratio; ns/op and the
// allocations are of a whole round (2 × chainRound commits).
//
//	go test -run '^$' -bench '^BenchmarkAppend64ChainAlternating$' -benchtime 2s ./events/
func BenchmarkAppend64ChainAlternating(b *testing.B) {
	type side struct {
		l       *Log
		f       Fence
		commits int // commits so far, naming the next commit's streams
		took    time.Duration
	}
	open := func(unchained bool) *side {
		l, f := openChainLog(b, unchained, false)
		return &side{l: l, f: f}
	}
	payload := benchEvent()
	commit := func(s *side, n int) { // n commits of 64 one-event streams, as benchmarkAppendChain's
		start := time.Now()
		for range n {
			append64(b, s.l, s.f, s.commits, payload)
			s.commits++
		}
		s.took += time.Since(start)
	}
	chained, unchained := open(false), open(true)
	commit(chained, 5)
	commit(unchained, 5)
	chained.took, unchained.took = 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		first, second := chained, unchained
		if i%2 == 1 {
			first, second = unchained, chained
		}
		commit(first, chainRound)
		commit(second, chainRound)
	}
	b.StopTimer()
	events := float64(b.N * chainRound * 64)
	b.ReportMetric(events/chained.took.Seconds(), "events/s-chained")
	b.ReportMetric(events/unchained.took.Seconds(), "events/s-unchained")
	b.ReportMetric(unchained.took.Seconds()/chained.took.Seconds(), "ratio")
}

// BenchmarkChainNext: the chain's work per record on the commit path
// (SHA-256 over the link and the record's chain form), for the record
// of BenchmarkAppend64Chained.
func BenchmarkChainNext(b *testing.B) {
	rec, err := MarshalRecord(Event{Seq: 1, Stream: "entity/Airport/GKA", Version: 1, Epoch: 1, Token: newToken(), Commit: "c1",
		Payload: benchEvent(), Link: Genesis("bench")})
	if err != nil {
		b.Fatal(err)
	}
	inner := rec[2+linkLen : len(rec)-checksumLen]
	var h ChainHash
	b.SetBytes(int64(len(rec)))
	b.ReportAllocs()
	for b.Loop() {
		h, _ = chainNext(h, inner)
	}
}
