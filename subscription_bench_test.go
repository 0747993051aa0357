package hikoutei

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// catchUpStore is a store with at least n events: airports committed 1,000
// a commit.
func catchUpStore(b *testing.B, n int) *Store {
	b.Helper()
	s := openStore(b, b.TempDir(), func(o *Options) { o.NoAdmin = true })
	for i := 0; head(b, s) < uint64(n); i++ {
		u := s.Begin()
		for j := range 1000 {
			mustT(b, u.Persist(airport(i*1000+j)))
		}
		_, err := u.Commit(ctx)
		mustT(b, err)
	}
	db, err := sql.Open("sqlite", "file:"+s.ReadModelPath())
	mustT(b, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE app_bench (seq INTEGER NOT NULL)")
	mustT(b, err)
	return s
}

// BenchmarkSubscriptionCatchUp measures a subscription catching up with
// 100,000 events from checkpoint 0: the callback mode (checkpoint every
// 100 and every 1,000 events), the transactional one (100 events a transaction, each
// inserting a row) and, as the floor, the bare Events iterator.
func BenchmarkSubscriptionCatchUp(b *testing.B) {
	s := catchUpStore(b, 100_000)
	defer s.Close()
	h := head(b, s)
	run := 0
	for _, every := range []int{100, 1000} {
		b.Run(fmt.Sprintf("callback/every=%d", every), func(b *testing.B) {
			for b.Loop() {
				run++
				ctx, cancel := context.WithCancel(ctx)
				_ = s.Subscribe(ctx, fmt.Sprint("cb", run), func(_ context.Context, ev Event) error {
					if ev.Seq == h {
						cancel()
					}
					return nil
				}, CheckpointEvery(every))
			}
			b.ReportMetric(float64(h)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
	b.Run("transactional", func(b *testing.B) {
		for b.Loop() {
			run++
			name := fmt.Sprint("tx", run)
			ctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				done <- s.SubscribeTx(ctx, name, func(ctx context.Context, tx *sql.Tx, ev Event) error {
					_, err := tx.ExecContext(ctx, "INSERT INTO app_bench(seq) VALUES (?)", ev.Seq)
					return err
				})
			}()
			waitCheckpoint(b, s, name, h)
			cancel()
			<-done
		}
		b.ReportMetric(float64(h)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("iterator", func(b *testing.B) {
		for b.Loop() {
			for _, err := range s.Events(ctx, 1) {
				mustT(b, err)
			}
		}
		b.ReportMetric(float64(h)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	})
}
