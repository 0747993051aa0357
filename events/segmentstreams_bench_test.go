package events

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// benchStreamsLog is a log of streams streams grown in rounds rounds,
// each appending two events to each of perRound streams chosen at random
// and sealing them: a stream's versions sit in a few segments among
// many. It returns the log and streams sampled among those sealed.
func benchStreamsLog(b *testing.B, streams, rounds, perRound int) (*Log, []string) {
	b.Helper()
	w, err := OpenWriter(b.TempDir(), WriterOptions{Log: Options{Clock: NewManualClock(t0), NoSync: true},
		Operation: "bench", AcquireWait: -1, HeartbeatInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = w.Close() })
	r := rand.New(rand.NewPCG(1, 2))
	for range rounds {
		var u Unit
		for _, s := range r.Perm(streams)[:perRound] {
			u.Streams = append(u.Streams, StreamAppend{Stream: fmt.Sprintf("entity/Part/%d", s),
				ExpectedVersion: AnyVersion, Events: []Event{{Payload: note(1)}, {Payload: note(2)}}})
		}
		if _, err := w.Append(u); err != nil {
			b.Fatal(err)
		}
		head, err := w.Log().Head()
		if err == nil {
			_, err = w.Log().Seal(w.Fence(), head+1)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	var sample []string
	for _, s := range r.Perm(streams)[:50] {
		if v, _ := w.Log().StreamVersion(fmt.Sprintf("entity/Part/%d", s)); v > 0 {
			sample = append(sample, fmt.Sprintf("entity/Part/%d", s))
		}
	}
	return w.Log(), sample
}

// BenchmarkSealedStreamHistory reads one stream's whole history
// (ReadStream from version 1: what Replay of an entity, AsOf and audit
// --entity do) in a log of 1,000 streams sealed 200 times, each seal
// holding two events of 10 streams: a stream's versions sit in about two
// segments. Each iteration reads a sampled stream twice, in an
// interleaved pair: through the segment streams index, then without it
// (every segment from the stream's newest sealed record back to its
// first, as before the index). It reports each one's time and segments
// read per history, and the index's size.
func BenchmarkSealedStreamHistory(b *testing.B) {
	l, sample := benchStreamsLog(b, 1000, 200, 10)
	defer func() { useSegStreams = true }()
	var took [2]time.Duration
	var segs [2]uint64
	n := 0
	for i := 0; b.Loop(); i++ {
		for m, index := range []bool{true, false} {
			useSegStreams = index
			before, start := l.SegmentReadStats().Loaded, time.Now()
			if err := l.ReadStream(sample[i%len(sample)], 1, func(Event) error { n++; return nil }); err != nil {
				b.Fatal(err)
			}
			took[m] += time.Since(start)
			segs[m] += l.SegmentReadStats().Loaded - before
		}
	}
	per := func(v float64) float64 { return v / float64(b.N) }
	b.ReportMetric(per(float64(took[0].Microseconds())), "µs-index/history")
	b.ReportMetric(per(float64(took[1].Microseconds())), "µs-scan/history")
	b.ReportMetric(per(float64(segs[0])), "segments-index/history")
	b.ReportMetric(per(float64(segs[1])), "segments-scan/history")
	b.ReportMetric(per(float64(n))/2, "events/history")
	b.ReportMetric(float64(l.SegmentReadStats().IndexFallbacks), "fallbacks")
	reportSegStreamsSize(b, l)
}

// BenchmarkSegmentStreamsIndexSize seals a store where every stream has
// records in every segment (loggen's workload: streams streams, two
// events each a seal, 20 seals) and reports the index's size against
// the segments' and log.db's: such segments are not worth indexing
// (indexWorth), so 0 bytes, except for a few streams.
func BenchmarkSegmentStreamsIndexSize(b *testing.B) {
	for _, streams := range []int{64, 100, 1000} {
		b.Run(fmt.Sprint(streams), func(b *testing.B) {
			for b.Loop() {
				l, _ := benchStreamsLog(b, streams, 20, streams)
				reportSegStreamsSize(b, l)
			}
		})
	}
}

// reportSegStreamsSize reports the index's keys and bytes in use, the
// segments' bytes and log.db's size.
func reportSegStreamsSize(b *testing.B, l *Log) {
	b.Helper()
	var st bolt.BucketStats
	err := l.view(func(tx *bolt.Tx) error {
		if bk := tx.Bucket(bucketSegStreams); bk != nil {
			st = bk.Stats()
		}
		return nil
	})
	segs, err2 := l.Segments()
	fi, err3 := os.Stat(l.Path())
	if err != nil || err2 != nil || err3 != nil {
		b.Fatal(err, err2, err3)
	}
	var segBytes int64
	for _, s := range segs {
		segBytes += s.Size
	}
	b.ReportMetric(float64(st.KeyN), "index-keys")
	b.ReportMetric(float64(st.BranchInuse+st.LeafInuse), "index-B")
	b.ReportMetric(float64(segBytes), "segment-B")
	b.ReportMetric(float64(fi.Size()), "logdb-B")
}
