package hikouteitest

import (
	"sync"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Disk is an in-memory hikoutei.DiskProbe (Options.DiskProbe): it answers
// the space Set last gave it, so a test can simulate a nearly full disk.
// Safe for concurrent use.
type Disk struct {
	mu sync.Mutex
	s  hikoutei.DiskSpace
}

// NewDisk is a filesystem of total bytes with free of them free.
func NewDisk(free, total uint64) *Disk {
	return &Disk{s: hikoutei.DiskSpace{Free: free, Total: total}}
}

// Set changes the free and total bytes the probe answers.
func (d *Disk) Set(free, total uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.s = hikoutei.DiskSpace{Free: free, Total: total}
}

// Space is what Set last gave, whatever dir.
func (d *Disk) Space(string) (hikoutei.DiskSpace, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.s, nil
}
