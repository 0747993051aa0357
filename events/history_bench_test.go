package events

import (
	"fmt"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkAppendPagesAfterHistory: what one commit of 100 updates (100
// entity streams of 5,000 in turn, fsync on) writes to log.db after a
// history of 2·10^4, 10^5 and 10^6 such updates: bbolt pages written per
// commit, and the freelist's size. With the stream links (log format 4)
// the pages stay near 23; with the stream index of formats 1 to 3 they grew
// with it (each update added an entry inside its stream's range, so a
// commit dirtied a leaf per stream once the index spanned more leaves than
// a commit's streams): 41, 71, 144. The freelist, written at every commit,
// grows with the free pages:
//
//	go test -run '^$' -bench '^BenchmarkAppendPagesAfterHistory$' -benchtime 200x ./events/
func BenchmarkAppendPagesAfterHistory(b *testing.B) {
	for _, n := range []int{20_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("history=%d", n), func(b *testing.B) {
			l, f := historyLog(b, n)
			defer l.Close()
			k := n
			s0 := l.db.Stats()
			b.ResetTimer()
			for range b.N {
				if _, err := l.Append(f, itemUnits(&k, 1, 100)...); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			s1 := l.db.Stats()
			d := s1.Sub(&s0)
			b.ReportMetric(float64(d.TxStats.GetWrite())/float64(b.N), "pages/commit")
			b.ReportMetric(float64(s1.FreelistInuse), "freelist-bytes")
		})
	}
}

// historyLog is a log holding n updates of 5,000 entity streams in turn,
// appended without fsync, reopened with fsync on, and a fence for it.
func historyLog(b testing.TB, n int) (*Log, Fence) {
	b.Helper()
	path := filepath.Join(b.TempDir(), LogFileName)
	l, err := OpenLog(path, Options{Clock: NewManualClock(t0), NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	lease, err := l.AcquireLease(AcquireRequest{WriterID: "w", Operation: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for k := 0; k < n; {
		if _, err := l.Append(lease.Fence(), itemUnits(&k, min(200, (n-k+99)/100), 100)...); err != nil {
			b.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	if l, err = OpenLog(path, Options{Clock: NewManualClock(t0)}); err != nil {
		b.Fatal(err)
	}
	return l, lease.Fence()
}

// itemUnits is units units of per updates, of entity/Item/k<k mod 5000>
// from *k on (advanced).
func itemUnits(k *int, units, per int) []Unit {
	us := make([]Unit, units)
	for i := range us {
		for range per {
			id := fmt.Sprint("k", *k%5000)
			us[i].Streams = append(us[i].Streams, StreamAppend{Stream: EntityStream("Item", id), ExpectedVersion: AnyVersion,
				Events: []Event{{Payload: EntityPersisted{Entity: "Item", ID: id, Fields: map[string]any{"n": int64(*k)}, Revisions: map[string]uint64{"n": uint64(*k)}}}}})
			*k++
		}
	}
	return us
}

// commitPages is the bbolt pages one commit of 100 updates writes to l,
// on average over 50 commits (every one of the 5,000 streams once) after
// 50 more, from update *k on.
func commitPages(t *testing.T, l *Log, f Fence, k *int) float64 {
	t.Helper()
	var s0 bolt.Stats
	for i := range 100 {
		if i == 50 {
			s0 = l.db.Stats()
		}
		if _, err := l.Append(f, itemUnits(k, 1, 100)...); err != nil {
			t.Fatal(err)
		}
	}
	s1 := l.db.Stats()
	d := s1.Sub(&s0)
	return float64(d.TxStats.GetWrite()) / 50
}

// A commit writes as many pages after a long history as after a short
// one: the stream links grow at their end (with the stream index keyed by
// stream and version, one commit of 100 updates wrote 41 pages after
// 2·10^4 updates and 71 after 10^5).
func TestACommitWritesAsManyPagesAfterALongHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("appends 10^5 records")
	}
	l, f := historyLog(t, 20_000)
	defer l.Close()
	k := 20_000
	short := commitPages(t, l, f, &k)
	for k < 100_000 {
		if _, err := l.Append(f, itemUnits(&k, 200, 100)...); err != nil {
			t.Fatal(err)
		}
	}
	long := commitPages(t, l, f, &k)
	if long > short*1.2 {
		t.Fatalf("a commit writes %.1f pages after 10^5 updates, %.1f after 2·10^4", long, short)
	}
	t.Logf("pages per commit: %.1f after 2·10^4 updates, %.1f after 10^5", short, long)
}
