package bench

import (
	"bufio"
	"fmt"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// rssTrace (the backfill benchmarks, both sides), when
// HIKOUTEI_BENCH_RSS_TRACE names a file, samples every 100 ms what the
// process's resident memory is made of and writes one line per sample
// there: the kernel's VmRSS split into RssAnon and RssFile
// (/proc/self/status) beside the Go runtime's own classes
// (runtime/metrics): heap objects, heap spans free but not returned to
// the OS, stacks, the runtime's other memory, and the rest of RssAnon,
// which no Go class accounts for (SQLite's allocator maps its own pages).
// It forces no collection, so unlike the peak heap profile it leaves the
// run's peak as it is. stop ends it and writes the sample with the
// highest VmRSS as a last line prefixed "peak".
func rssTrace(b *testing.B) (stop func()) {
	path := os.Getenv(config.EnvBenchRSSTrace)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, rssHeader)
	done, quit := make(chan struct{}), make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		var peak rssSample
		for {
			s := sampleRSS(time.Since(start))
			fmt.Fprintln(w, s)
			if s.rss > peak.rss {
				peak = s
			}
			select {
			case <-quit:
				fmt.Fprintln(w, "peak", peak)
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		if err := w.Flush(); err != nil {
			b.Error(err)
		}
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}

const rssHeader = "secs rss anon file heap_objects heap_free_kept stacks runtime_other non_go_anon live goal (MB)"

// rssSample is one sample of rssTrace, in bytes.
type rssSample struct {
	at                                           time.Duration
	rss, anon, file                              uint64
	objects, freeKept, stacks, other, live, goal uint64
}

var rssMetrics = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/total:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/unused:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
}

func sampleRSS(at time.Duration) rssSample {
	ms := make([]metrics.Sample, len(rssMetrics))
	for i, n := range rssMetrics {
		ms[i].Name = n
	}
	metrics.Read(ms)
	v := func(i int) uint64 { return ms[i].Value.Uint64() }
	s := rssSample{at: at, objects: v(0) + v(5), freeKept: v(1), stacks: v(2), live: v(6), goal: v(7)}
	s.other = v(3) - v(4) - s.objects - s.freeKept - s.stacks
	st := procStatus("VmRSS:", "RssAnon:", "RssFile:")
	s.rss, s.anon, s.file = st[0], st[1], st[2]
	return s
}

func (s rssSample) String() string {
	goAnon := s.objects + s.freeKept + s.stacks + s.other
	nonGo := int64(s.anon) - int64(goAnon)
	mb := func(x uint64) string { return strconv.FormatFloat(float64(x)/(1<<20), 'f', 1, 64) }
	return fmt.Sprintf("%.1f %s %s %s %s %s %s %s %.1f %s %s", s.at.Seconds(), mb(s.rss), mb(s.anon), mb(s.file),
		mb(s.objects), mb(s.freeKept), mb(s.stacks), mb(s.other), float64(nonGo)/(1<<20), mb(s.live), mb(s.goal))
}

// procStatus reads the named fields (kB) of /proc/self/status in bytes
// (0 where absent).
func procStatus(names ...string) []uint64 {
	out := make([]uint64, len(names))
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		for i, n := range names {
			if v, ok := strings.CutPrefix(line, n); ok {
				kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				out[i] = kb << 10
			}
		}
	}
	return out
}
