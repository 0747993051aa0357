package disk

import (
	"errors"
	"testing"
	"time"
)

const gib = 1 << 30

// The projection rule: growth projects when the filesystem fills, a
// store that does not grow or shrinks never fills by itself, the share
// used warns and goes critical on its own.
func TestProjectionRule(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	grow := func(perHour int64) []Sample {
		return []Sample{{At: t0, Bytes: 10 * gib}, {At: t0.Add(30 * time.Minute), Bytes: 10*gib + perHour/2},
			{At: now, Bytes: 10*gib + perHour}}
	}
	cases := []struct {
		name    string
		samples []Sample
		space   Space
		want    error
		fullIn  time.Duration // 0: never
	}{
		{"growth fills within the horizon", grow(gib), Space{Free: 48 * gib, Total: 100 * gib}, ErrDiskFilling, 48 * time.Hour},
		{"growth fills after the horizon", grow(gib), Space{Free: 50 * gib * 7 * 24, Total: 1000 * 50 * gib}, nil, 50 * 7 * 24 * time.Hour},
		{"no growth", grow(0), Space{Free: gib, Total: 100 * gib}, ErrDiskFull, 0},
		{"no growth, half used", grow(0), Space{Free: 50 * gib, Total: 100 * gib}, nil, 0},
		{"shrinking", grow(-gib), Space{Free: 50 * gib, Total: 100 * gib}, nil, 0},
		{"above the warning share without growth", grow(0), Space{Free: 5 * gib, Total: 100 * gib}, ErrDiskFilling, 0},
		{"full", grow(gib), Space{Free: 0, Total: 100 * gib}, ErrDiskFull, 0},
		{"one sample: no rate", grow(gib)[:1], Space{Free: 48 * gib, Total: 100 * gib}, nil, 0},
		{"samples too close: no rate", []Sample{{At: now.Add(-time.Minute), Bytes: 0}, {At: now, Bytes: gib}},
			Space{Free: 48 * gib, Total: 100 * gib}, nil, 0},
		{"unknown total", grow(gib), Space{}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Project(c.samples, c.space, now, DefaultLimits)
			if c.want == nil && v.Err != nil || c.want != nil && !errors.Is(v.Err, c.want) {
				t.Fatalf("err = %v, want %v", v.Err, c.want)
			}
			if c.fullIn == 0 {
				if !v.FullAt.IsZero() && c.want != ErrDiskFull {
					t.Fatalf("full at %v, want never", v.FullAt)
				}
				return
			}
			if got := v.FullAt.Sub(now); got < c.fullIn-time.Second || got > c.fullIn+time.Second {
				t.Fatalf("full in %v, want %v", got, c.fullIn)
			}
		})
	}
}

// The monitor keeps one sample a minute over a day, with the caller's
// clock, and measures growth from them.
func TestMonitorSamplesWithTheCallersClock(t *testing.T) {
	m := &Monitor{limits: DefaultLimits}
	t0 := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 3*24*60*2; i++ { // every 30 s for 3 days
		m.record(Sample{At: t0.Add(time.Duration(i) * 30 * time.Second), Bytes: int64(i)})
	}
	got := m.record(Sample{At: t0.Add(72 * time.Hour), Bytes: 8640})
	if n := len(m.series); n < 24*60 || n > 24*60+2 {
		t.Fatalf("%d samples kept, want about one a minute over a day", n)
	}
	if span := got[1].At.Sub(got[0].At); span > sampleWindow || span < sampleWindow-time.Minute {
		t.Fatalf("samples span %v, want a day", span)
	}
	if m.record(Sample{At: t0, Bytes: 1}); len(m.series) != 1 {
		t.Fatalf("after the clock went back %d samples, want 1", len(m.series))
	}
}

// ReadFiles counts the hot log, the segments and the read model; a store
// with nothing sealed has no segments folder.
func TestReadFilesOfAStoreFolder(t *testing.T) {
	dir := t.TempDir()
	f, err := ReadFiles(dir)
	if err != nil || f.Total() != 0 || f.Segments != 0 {
		t.Fatalf("empty folder: %+v, %v", f, err)
	}
	write(t, dir+"/log.db", 100)
	write(t, dir+"/read.sqlite", 10)
	if err := mkdir(dir + "/segments"); err != nil {
		t.Fatal(err)
	}
	write(t, dir+"/segments/a.seg.zst", 7)
	write(t, dir+"/segments/b.seg.zst", 8)
	write(t, dir+"/segments/b.seg.zst.tmp", 99)
	f, err = ReadFiles(dir)
	if err != nil || f.LogBytes != 100 || f.Segments != 2 || f.SegmentBytes != 15 || f.ReadModelBytes != 10 {
		t.Fatalf("got %+v, %v", f, err)
	}
}

// fixedSpace is a Probe of a filesystem that never changes.
type fixedSpace Space

func (s fixedSpace) Space(string) (Space, error) { return Space(s), nil }

// read.sqlite's write-ahead log filling to its bound during a bulk load
// is no growth of the store: a 40 MB log that appears between two
// samples 20 minutes apart, on a filesystem with 20 GB free, is no
// warning that it fills within a week (as growth it would be 2.9 GB a
// day), while the read model's size still counts it.
func TestTheWriteAheadLogIsNoGrowth(t *testing.T) {
	dir := t.TempDir()
	write(t, dir+"/log.db", 1000)
	write(t, dir+"/read.sqlite", 1000)
	m := NewMonitor(dir, fixedSpace{Free: 20e9, Total: 100e9})
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	if _, err := m.Check(t0); err != nil {
		t.Fatal(err)
	}
	write(t, dir+"/read.sqlite-wal", 40e6)
	r, err := m.Check(t0.Add(20 * time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict.Err != nil || r.Verdict.Growth != 0 {
		t.Fatalf("a write-ahead log of 40 MB read as growth: %v, %.0f bytes/s", r.Verdict.Err, r.Verdict.Growth)
	}
	if r.Files.ReadModelBytes != 1000+40e6 || r.Files.ReadModelWALBytes != 40e6 {
		t.Fatalf("read model %d bytes (write-ahead log %d); want 40001000 (40000000)", r.Files.ReadModelBytes, r.Files.ReadModelWALBytes)
	}
	write(t, dir+"/log.db", 40e6)
	if r, _ = m.Check(t0.Add(40 * time.Minute)); r.Verdict.Growth <= 0 {
		t.Fatalf("40 MB more of log.db read as no growth: %+v", r.Verdict)
	}
}

// The real probe tells a size and free space for a real folder.
func TestStatfsProbeOfATempFolder(t *testing.T) {
	s, err := Statfs{}.Space(t.TempDir())
	if errors.Is(err, ErrSpaceUnknown) {
		return // a platform without statfs: said so
	}
	if err != nil || s.Total == 0 || s.Free > s.Total {
		t.Fatalf("got %+v, %v", s, err)
	}
}
