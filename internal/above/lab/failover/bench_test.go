package failover_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// BenchmarkStoreCommit compares Store commits in replicated mode (a
// 3-node R3 cluster on loopback, sync_interval always) with the embedded
// default on the same machine: 16 callers committing one record each, as
// an application's requests do (the store group-commits them).
//
//	go test -run '^$' -bench BenchmarkStoreCommit -benchtime 4000x ./internal/failover/
func BenchmarkStoreCommit(b *testing.B) {
	b.Run("local", func(b *testing.B) { benchCommit(b, nil) })
	b.Run("replicated-R3", func(b *testing.B) {
		c := replicationtest.StartCluster(b, 3)
		benchCommit(b, &hikoutei.ReplicationOptions{URL: c.URLs(), Store: "bench"})
	})
}

func benchCommit(b *testing.B, repl *hikoutei.ReplicationOptions) {
	s, err := hikoutei.Open(b.Context(), filepath.Join(b.TempDir(), "bench"), hikoutei.Options{Replication: repl, HeartbeatInterval: -1},
		hikoutei.Entity[Item]("Item"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const callers = 16
	var mu sync.Mutex
	var lat []time.Duration
	next := make(chan int)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for i := range next {
				t := time.Now()
				u := s.Begin()
				if err := u.Persist(&Item{ID: fmt.Sprint(i), Note: "n"}); err != nil {
					b.Error(err)
				}
				if _, err := u.Commit(context.Background()); err != nil {
					b.Error(err)
				}
				mu.Lock()
				lat = append(lat, time.Since(t))
				mu.Unlock()
			}
		})
	}
	start, i := time.Now(), 0
	for b.Loop() {
		next <- i
		i++
	}
	close(next)
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "commits/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
}
