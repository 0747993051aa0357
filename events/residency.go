package events

import "sync/atomic"

// The log's mapped pages are released (Log.ReleaseMapped) after
// releaseBytes of records or releaseAppends appends, whichever comes first.
// Measured on Linux: one append of 500 events to random streams leaves
// 20–30 MB of log.db resident (B+tree pages of the stream buckets, plus the
// kernel's fault-around of neighbouring cached pages), so without releases
// a long run's resident set grows towards the size of log.db.
const (
	releaseBytes   = 32 << 10
	releaseAppends = 16
)

// residency counts what was appended since the last release.
type residency struct {
	bytes, appends atomic.Int64
}

// noteAppended records an append of n bytes and releases the mapping when
// a threshold is reached. A failed release is not an error of the append
// (the pages merely stay resident); it is returned for tests.
func (l *Log) noteAppended(n int) error {
	if l.res.bytes.Add(int64(n)) < releaseBytes && l.res.appends.Add(1) < releaseAppends {
		return nil
	}
	l.res.bytes.Store(0)
	l.res.appends.Store(0)
	return l.ReleaseMapped()
}

// encodedSize is the number of payload bytes of encoded units.
func encodedSize(enc []encodedUnit) int {
	n := 0
	for _, u := range enc {
		for _, p := range u.payloads {
			n += len(p)
		}
	}
	return n
}
