package hikoutei_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/loggen"
)

// benchUnits is how many units of 100 updates a commit-rate run commits.
const benchUnits = 200

// openItems opens the Item store at dir with opts (logger discarded).
func openItems(b *testing.B, dir string, opts hikoutei.Options) *hikoutei.Store {
	b.Helper()
	opts.Logger = slog.New(slog.DiscardHandler)
	s, err := hikoutei.Open(context.Background(), dir, opts, hikoutei.Entity[Item](loggen.Entity))
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// commitUnits commits units units of 100 updates of Item (5,000 keys in
// turn, as loggen writes them), starting at update from; it returns the
// time the commits took.
func commitUnits(b *testing.B, s *hikoutei.Store, from, units int) time.Duration {
	b.Helper()
	start := time.Now()
	for u := range units {
		w := s.Begin()
		for i := range 100 {
			k := from + u*100 + i
			if err := w.Persist(&Item{ID: "k" + strconv.Itoa(k%5000), N: int64(k), Name: "item " + strconv.Itoa(k)}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkCommitRateAfterHistory: the commit rate (units of 100 updates,
// default Options, fsync on) on a store whose log holds 10^6 generated
// events, divided by the rate on an empty store (goal ≥ 0.9). Each
// iteration commits 200 units on each, in alternating rounds of 20. Keep the generated log with
// HIKOUTEI_BENCH_LOGS (see BenchmarkOpenHistory):
//
//	HIKOUTEI_BENCH_LOGS=/var/tmp/hikoutei-logs go test -run '^$' -bench '^BenchmarkCommitRateAfterHistory$' -benchtime 1x -timeout 1h .
func BenchmarkCommitRateAfterHistory(b *testing.B) {
	hist := openItems(b, historyStore(b, 1e6), hikoutei.Options{})
	defer hist.Close()
	empty := openItems(b, b.TempDir(), hikoutei.Options{})
	defer empty.Close()
	commitUnits(b, empty, 0, 50) // both warm, every key created: the timed units update, as on the history
	commitUnits(b, hist, 0, 50)
	var tEmpty, tHist time.Duration
	b.ResetTimer()
	for i := range b.N { // alternating rounds of 20 units, so that a slow phase of a shared machine hits both
		for r := range benchUnits / 20 {
			from := (i*benchUnits + r*20) * 100
			tEmpty += commitUnits(b, empty, from, 20)
			tHist += commitUnits(b, hist, from, 20)
		}
	}
	events := float64(b.N * benchUnits * 100)
	b.ReportMetric(events/tEmpty.Seconds(), "events/s-empty")
	b.ReportMetric(events/tHist.Seconds(), "events/s-1e6")
	b.ReportMetric(tEmpty.Seconds()/tHist.Seconds(), "ratio")
}

// BenchmarkHotLogUnderRetention: the size of the hot log.db while 10^6
// updates stream in (units of 100, fsync on) under a retention window
// of the newest 100,000 records (Retention{KeepRecords: 100_000}, the
// default batch of 10,000), at 25, 50, 75 and 100 % (goal: flat), and
// the segments written. One iteration is the whole stream:
//
//	go test -run '^$' -bench '^BenchmarkHotLogUnderRetention$' -benchtime 1x -timeout 1h .
func BenchmarkHotLogUnderRetention(b *testing.B) {
	const quarter = 2_500 // units of 100 updates: 10^6 in all
	for range b.N {
		dir := b.TempDir()
		s := openItems(b, dir, hikoutei.Options{Retention: hikoutei.Retention{KeepRecords: 100_000}})
		for q := range 4 {
			commitUnits(b, s, q*quarter*100, quarter)
			fi, err := os.Stat(filepath.Join(dir, "log.db"))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(fi.Size())/(1<<20), fmt.Sprintf("MiB-at-%d%%", 25*(q+1)))
		}
		h := s.Health().RetentionStatus
		b.ReportMetric(float64(h.Seals), "seals")
		b.ReportMetric(float64(h.Failures), "seal-failures")
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
		reportBuckets(b, filepath.Join(dir, "log.db"))
	}
}

// reportBuckets reports the keys and bytes in use of each bucket of the
// bbolt file at path, and its free pages (what a seal freed and bbolt
// reuses).
func reportBuckets(b *testing.B, path string) {
	b.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second}) // read-write: bbolt loads the freelist
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, bk *bolt.Bucket) error {
			st := bk.Stats()
			b.ReportMetric(float64(st.KeyN), "keys-"+string(name))
			b.ReportMetric(float64(st.BranchInuse+st.LeafInuse)/(1<<20), "MiB-"+string(name))
			return nil
		})
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(db.Stats().FreePageN), "free-pages")
}
