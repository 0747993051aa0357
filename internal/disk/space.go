package disk

import "sync"

// Space is the size of a filesystem and what is free on it, in bytes.
type Space struct {
	Free, Total uint64
}

// UsedShare is the share of the filesystem in use, 0 to 1 (0 when the
// total is unknown).
func (s Space) UsedShare() float64 {
	if s.Total == 0 || s.Free > s.Total {
		return 0
	}
	return float64(s.Total-s.Free) / float64(s.Total)
}

// Probe tells the space of the filesystem holding a directory.
type Probe interface {
	Space(dir string) (Space, error)
}

// Statfs is the real Probe: statfs(2) where the platform has it, else
// ErrSpaceUnknown.
type Statfs struct{}

// Space is the space of the filesystem holding dir.
func (Statfs) Space(dir string) (Space, error) { return statfs(dir) }

// Fixed is an in-memory Probe that answers what Set last gave it, for
// tests and simulations. Safe for concurrent use.
type Fixed struct {
	mu sync.Mutex
	s  Space
}

// NewFixed is a Fixed probe answering s.
func NewFixed(s Space) *Fixed { return &Fixed{s: s} }

// Set changes what the probe answers.
func (f *Fixed) Set(s Space) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.s = s
}

// Space is what Set last gave, whatever dir.
func (f *Fixed) Space(string) (Space, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.s, nil
}
