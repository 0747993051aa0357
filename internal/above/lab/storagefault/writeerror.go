package storagefault

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// writePoints are the durability boundaries a write_error run fails at,
// each with how many passes a run makes at most (the failing pass is
// drawn from 1..n).
var writePoints = []struct {
	name   string
	passes int
}{{failpoint.LogBeforeCommit, 30}, {failpoint.LogAfterCommit, 30}, {failpoint.ReadModelBeforeCommit, 30},
	{failpoint.SnapshotBeforeManifest, 1}, {failpoint.LeaseFileBeforeRename, 1}}

// writeUnits is how many units a write_error run commits in all.
const writeUnits = 40

// runWriteError arms one failing write (EIO or ENOSPC, at the N-th pass
// of a boundary), commits writeUnits units, reopening whenever the store
// refuses to go on, then probes with the failpoint off.
func runWriteError(spec RunSpec) (RunResult, error) {
	rng := rand.New(rand.NewPCG(spec.Seed, 0xe10))
	point := writePoints[rng.IntN(len(writePoints))]
	fp := fmt.Sprintf("%s=%s@%d", point.name, []string{"eio", "enospc"}[rng.IntN(2)], 1+rng.IntN(point.passes))
	if err := failpoint.Enable(fp); err != nil {
		return RunResult{}, err
	}
	defer failpoint.Disable()
	res := RunResult{Kind: spec.Kind}
	store := filepath.Join(spec.Dir, "store")
	w := newWorkload(spec.Seed)
	opens := 0
	for done := 0; done < writeUnits; opens++ {
		if opens > 3 {
			res.Problems = append(res.Problems, "the store did not open three times running")
			break
		}
		done += commitUntilRefused(store, opens, w, writeUnits-done, &res)
	}
	res.Detail = fmt.Sprintf("%s (passed %d times)", fp, failpoint.Hits(point.name))
	failpoint.Disable()
	res.Acked = len(w.l.acked)
	res.Probe = probe(store, opens, w.l)
	return res, nil
}

// commitUntilRefused opens the store and commits up to n units, stopping
// after a commit whose outcome is uncertain (the store then refuses every
// commit until reopened: checked once). It returns the units attempted.
func commitUntilRefused(store string, opens int, w *workload, n int, res *RunResult) int {
	s, err := hikoutei.Open(context.Background(), store, storeOptions(opens), NoteDef)
	if err != nil {
		res.Codes = append(res.Codes, "open: "+codeText(err))
		return 0
	}
	i := 0
	for ; i < n; i++ {
		err := w.unit(s)
		if err == nil || errors.Is(err, hikoutei.ErrReadModelBehind) {
			continue
		}
		res.Codes = append(res.Codes, codeText(err))
		if s.Health().Local == nil {
			res.Unreported++
		}
		if errors.Is(err, hikoutei.ErrLogCommitUncertain) {
			i += 2
			if err := w.unit(s); !errors.Is(err, hikoutei.ErrLogCommitUncertain) {
				res.Problems = append(res.Problems, fmt.Sprintf("a commit after an uncertain one was not refused: %v", err))
			}
			break
		}
	}
	if err := s.Close(); err != nil {
		res.Codes = append(res.Codes, "close: "+codeText(err))
	}
	return i
}
