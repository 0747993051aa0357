package events

import (
	"path/filepath"
	"testing"
)

// A damaged entity.persisted takes with it the effect.queued of its commit
// whose values refer to it (values_of): salvage counts both lost, and the
// salvaged log reads through, instead of holding a record no read can fill.
func TestSalvageLosesAQueuedEffectWhoseValuesReferToALostRecord(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, LogFileName)
	l, err := OpenLog(src, Options{Clock: NewManualClock(t0)})
	must(t, err)
	u, _ := persistedAndQueued()
	res, err := l.Append(acquire(t, l, "w").Fence(), u)
	must(t, err)
	queued := res[0].Last
	persisted := queued - 1
	must(t, l.Close())
	corruptRecord(t, src, persisted, func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b })

	dst := filepath.Join(t.TempDir(), LogFileName)
	rep, err := SalvageLog(src, dst, SalvageOptions{})
	must(t, err)
	if !rep.Lost.Contains(persisted) || !rep.Lost.Contains(queued) {
		t.Fatalf("lost %v, want %d (damaged) and %d (refers to it)", rep.Lost, persisted, queued)
	}
	out, err := OpenLog(dst, Options{ReadOnly: true})
	must(t, err)
	defer out.Close()
	must(t, out.ReadFrom(1, func(e Event) error {
		if e.Seq == queued {
			t.Fatalf("the salvaged log still holds %d", queued)
		}
		return nil
	}))
}
