package storagefault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Note is the entity the storage runs commit.
type Note struct {
	ID   string `hikoutei:"id,pk"`
	Text string `hikoutei:"text"`
}

// NoteDef declares Note.
var NoteDef = hikoutei.Entity[Note]("Note")

// Bounds of a disk-full run's filling phase: it ends after maxRefused
// refused commits, and fails after maxAttempts if the disk never fills.
const (
	maxRefused  = 100
	maxAttempts = 50_000
)

// runDiskFull fills a small filesystem (spec.Size bytes, or 1–6 MB by the
// seed) with commits until maxRefused were refused, frees space, commits
// again without reopening, closes and probes.
func runDiskFull(spec RunSpec) (RunResult, error) {
	size := spec.Size
	if size == 0 {
		size = 1<<20 + int64(spec.Seed*7919%5)<<20
	}
	disk, err := NewSmallDisk(spec.Dir, size)
	if err != nil {
		return RunResult{}, err
	}
	defer disk.Unmount()
	res := RunResult{Kind: spec.Kind, Detail: fmt.Sprintf("%s of %d MB", disk.Medium, size>>20)}
	store := filepath.Join(spec.Dir, "store")
	w, err := fill(store, spec.Seed, &res, func() error { return disk.Grow(64 << 20) })
	if err != nil {
		return res, err
	}
	res.Acked = len(w.l.acked)
	res.Probe = probe(store, 1, w.l)
	return res, nil
}

// fill commits until maxRefused units were refused, calls grow, and
// checks that the same store commits again.
func fill(store string, seed uint64, res *RunResult, grow func() error) (*workload, error) {
	s, err := hikoutei.Open(context.Background(), store, storeOptions(0), NoteDef)
	if err != nil {
		return nil, err
	}
	w := newWorkload(seed)
	for refused := 0; refused < maxRefused; {
		if w.next >= maxAttempts {
			return w, errors.Join(fmt.Errorf("%d notes, %d refused: the disk never filled", w.next, refused), s.Close())
		}
		if err := w.unit(s); err != nil && !errors.Is(err, hikoutei.ErrReadModelBehind) {
			refused++
			res.Codes = append(res.Codes, refusalCode(err))
			if s.Health().Local == nil {
				res.Unreported++
			}
		}
	}
	if err := grow(); err != nil {
		return w, errors.Join(err, s.Close())
	}
	if err := w.unit(s); err != nil {
		res.Problems = append(res.Problems, "no commit after space was freed: "+codeText(err))
	}
	return w, s.Close()
}

// refusalCode is the stable code of a refused commit, found with errors.Is
// (the text carries context before the code: "append: log_write_failed:
// …"), or the text up to its first colon for any other error.
func refusalCode(err error) string {
	for _, code := range []error{hikoutei.ErrLogWrite, hikoutei.ErrReadModelUnavailable} {
		if errors.Is(err, code) {
			return code.Error()
		}
	}
	return codeText(err)
}
