package replication

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// appendP99Goal is the speed goal of one replicated Append (3 records of
// 300 bytes) on a loopback cluster with fsync on every write.
const appendP99Goal = 50 * time.Millisecond

// BenchmarkAppend measures sequential Append throughput and p99 latency
// on a 3-node R3 cluster against a single server with an R1 stream (both
// with sync_interval: always), one commit of 3 records of 300 bytes at a
// time, as a primary commits.
//
//	go test -run '^$' -bench BenchmarkAppend -benchtime 2000x ./internal/replication/
func BenchmarkAppend(b *testing.B) {
	b.Run("R3-cluster", func(b *testing.B) { benchAppend(b, 3) })
	b.Run("R1-single", func(b *testing.B) { benchAppend(b, 1) })
}

func benchAppend(b *testing.B, nodes int) {
	c := replicationtest.StartCluster(b, nodes)
	l := openLog(b, c.Connect(), "bench", nodes)
	commit := [][]byte{make([]byte, 300), make([]byte, 300), make([]byte, 300)}
	var lat []time.Duration
	head := uint64(0)
	ctx := ctxFor(b, time.Hour)
	start := time.Now()
	for b.Loop() {
		t := time.Now()
		seq, err := l.Append(ctx, head, commit)
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		head = seq
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	p99 := lat[len(lat)*99/100]
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
	if nodes > 1 && len(lat) >= 100 && p99 > appendP99Goal {
		b.Errorf("p99 %s above the goal %s", p99, appendP99Goal)
	}
}

// BenchmarkStoreLogCommit compares a store log's commit (events.Log.Append
// of one unit, fsync on) replicated on a 3-node R3 cluster with the same
// commit of a local log, sequential, as one writer commits: the ratio of
// replicated mode to the embedded default, below the engine's batching.
//
//	go test -run '^$' -bench BenchmarkStoreLogCommit -benchtime 1000x ./internal/replication/
func BenchmarkStoreLogCommit(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchStoreLog(b, nil) })
	b.Run("replicated-R3", func(b *testing.B) {
		c := replicationtest.StartCluster(b, 3)
		benchStoreLog(b, &Replicator{Log: openLog(b, c.Connect(), "benchstore", 3)})
	})
}

func benchStoreLog(b *testing.B, r events.Replicator) {
	l, err := events.OpenLog(filepath.Join(b.TempDir(), events.LogFileName), events.Options{Replicator: r})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	lease, err := l.AcquireLease(events.AcquireRequest{WriterID: "bench", Operation: "bench", TTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	var lat []time.Duration
	start := time.Now()
	i := 0
	for b.Loop() {
		t := time.Now()
		if _, err := l.Append(lease.Fence(), diverged(i%26)); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t))
		i++
	}
	elapsed := time.Since(start)
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
