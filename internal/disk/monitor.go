package disk

import (
	"sync"
	"time"
)

// Sampling bounds: a sample is kept at most every sampleEvery, over the
// last sampleWindow.
const (
	sampleEvery  = time.Minute
	sampleWindow = 24 * time.Hour
)

// Report is a store's disk now: its files, the space of its filesystem
// (SpaceErr when unknown) and the verdict.
type Report struct {
	Files
	Space    Space
	SpaceErr error
	Verdict
}

// Monitor measures one store directory and keeps the samples of its size
// taken with the caller's clock. Safe for concurrent use.
type Monitor struct {
	dir    string
	probe  Probe
	limits Limits
	mu     sync.Mutex
	series []Sample
}

// NewMonitor measures dir with probe (nil: Statfs) under DefaultLimits.
func NewMonitor(dir string, probe Probe) *Monitor {
	if probe == nil {
		probe = Statfs{}
	}
	return &Monitor{dir: dir, probe: probe, limits: DefaultLimits}
}

// Check measures the store at now (the caller's clock), records the
// sample and judges the filesystem.
func (m *Monitor) Check(now time.Time) (Report, error) {
	files, err := ReadFiles(m.dir)
	if err != nil {
		return Report{Files: files}, err
	}
	r := Report{Files: files}
	r.Space, r.SpaceErr = m.probe.Space(m.dir)
	samples := m.record(Sample{At: now, Bytes: files.Lasting()})
	if r.SpaceErr == nil {
		r.Verdict = Project(samples, r.Space, now, m.limits)
	}
	return r, nil
}

// record keeps s (one sample per sampleEvery, and the newest) over the
// window and returns the window's first and last samples.
func (m *Monitor) record(s Sample) []Sample {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.series)
	switch {
	case n > 0 && s.At.Before(m.series[n-1].At):
		// the clock went back: start over
		m.series = m.series[:0]
		m.series = append(m.series, s)
	case n > 1 && m.series[n-1].At.Sub(m.series[n-2].At) < sampleEvery:
		m.series[n-1] = s
	default:
		m.series = append(m.series, s)
	}
	cut := 0
	for cut < len(m.series)-1 && s.At.Sub(m.series[cut].At) > sampleWindow {
		cut++
	}
	if cut > 0 {
		m.series = append(m.series[:0:0], m.series[cut:]...)
	}
	return []Sample{m.series[0], m.series[len(m.series)-1]}
}
