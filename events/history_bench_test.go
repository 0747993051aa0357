package events

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkAppendPagesAfterHistory: what one commit of 100 updates (100
// entity streams of 5,000 in turn, fsync on) writes to log.db after a
// history of 2·10^4, 10^5 and 10^6 such updates: bbolt pages written per
// commit, and the freelist's size. The pages grow with the stream index
// (each update adds an entry inside its stream's range, so a commit dirties
// a leaf per stream once the index spans more leaves than a commit's
// streams) and saturate near 140; the freelist, written at every commit,
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
func historyLog(b *testing.B, n int) (*Log, Fence) {
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
		if _, err := l.Append(lease.Fence(), itemUnits(&k, 200, 100)...); err != nil {
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
