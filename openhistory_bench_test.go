package hikoutei_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/loggen"
)

// Item is loggen's entity, declared by Go type.
type Item struct {
	ID   string `hikoutei:"id,pk"`
	N    int64  `hikoutei:"n"`
	Name string `hikoutei:"name"`
}

// historyStore returns a store directory whose log holds n generated
// updates (internal/loggen): kept in HIKOUTEI_BENCH_LOGS when set (and
// reused by the next run), else in a temporary directory.
func historyStore(b *testing.B, n uint64) string {
	b.Helper()
	root := os.Getenv(config.EnvBenchLogs)
	if root == "" {
		root = b.TempDir()
	}
	dir := filepath.Join(root, fmt.Sprintf("history-%d", n))
	if _, err := os.Stat(filepath.Join(dir, "log.db")); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	os.RemoveAll(tmp)
	start := time.Now()
	head, err := loggen.Generate(tmp, n, loggen.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("generated %d events (head %d) in %s", n, head, time.Since(start))
	return dir
}

// BenchmarkOpenHistory: Open (and Close) of a store whose log holds
// 10^5, 10^6 and 10^7 events (5,000 keys updated in units of 100, read
// model at the head), default Options, after one untimed open (the one
// after an upgrade, which walks the whole chain once and records the
// chain checkpoint). Goal: ≤ 1 s at 10^7 and flat as the log
// grows. Generating 10^7 events takes long (over half an hour on two
// shared cores): keep them with
//
//	HIKOUTEI_BENCH_LOGS=/var/tmp/hikoutei-logs go test -run '^$' -bench '^BenchmarkOpenHistory$' -benchtime 3x -timeout 3h .
func BenchmarkOpenHistory(b *testing.B) {
	for _, n := range []uint64{1e5, 1e6, 1e7} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			dir := historyStore(b, n)
			openClose(b, dir)
			b.ResetTimer()
			for range b.N {
				openClose(b, dir)
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/open")
		})
	}
}

// openClose opens the generated store in dir and closes it.
func openClose(b *testing.B, dir string) {
	opts := hikoutei.Options{Logger: slog.New(slog.DiscardHandler)}
	s, err := hikoutei.Open(context.Background(), dir, opts, hikoutei.Entity[Item](loggen.Entity))
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
}
