package hikoutei

import (
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// BenchmarkAsOf builds views of a 20,000-row log (GeoNames cities in
// units of 250, a snapshot taken after 19,000 of them): at the head
// (from that snapshot plus the last 1,000 rows), just before the
// snapshot (replayed from the first record), and by time (a scan of the
// log's recorded times, then as at the head). One op = one AsOf + Close.
//
//	go test -run '^$' -bench 'BenchmarkAsOf' -benchtime 5x .
func BenchmarkAsOf(b *testing.B) {
	clock := events.NewManualClock(t0)
	opts := benchOptions()
	opts.Clock, opts.HeartbeatInterval = clock, -1
	s, err := Open(b.Context(), b.TempDir(), opts, Entity[City]("City"))
	mustT(b, err)
	defer s.Close()
	cities := readCities(b)[:20000]
	commitCities(b, s, clock, cities[:19000])
	snap, err := s.Snapshot(ctx)
	mustT(b, err)
	commitCities(b, s, clock, cities[19000:])
	head := checkpoint(b, s)
	for _, c := range []struct {
		name     string
		at       Point
		fromSnap bool
	}{
		{"head-from-snapshot", AtSeq(head), true},
		{"before-snapshot-from-zero", AtSeq(snap.Seq - 1), false},
		{"by-time-head", AtTime(clock.Now()), true},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				v, err := s.AsOf(ctx, c.at)
				mustT(b, err)
				if (v.SnapshotSeq() > 0) != c.fromSnap {
					b.Fatalf("view from snapshot %d", v.SnapshotSeq())
				}
				mustT(b, v.Close())
			}
		})
	}
}

// commitCities commits cities in units of 250, a second apart.
func commitCities(b *testing.B, s *Store, clock *events.ManualClock, cities []City) {
	b.Helper()
	for i := 0; i < len(cities); i += 250 {
		clock.Advance(time.Second)
		u := s.Begin()
		for j := i; j < min(i+250, len(cities)); j++ {
			mustT(b, u.Persist(&cities[j]))
		}
		_, err := u.Commit(ctx)
		mustT(b, err)
	}
}
