package storagefault

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// flipUnits is how many units a flip run's store holds (with snapshots
// every 40 events, at least one snapshot).
const flipUnits = 30

// runFlip flips 1–3 bytes of a closed store's log, read model or newest
// snapshot (then deletes read.sqlite, so the open restores from
// snapshots), and probes: the store must return every acknowledged note
// or report the damage.
func runFlip(spec RunSpec) (RunResult, error) {
	w, err := baseStore(spec.Dir, flipUnits, spec.Seed)
	if err != nil {
		return RunResult{}, err
	}
	target, err := flipTarget(spec)
	if err != nil {
		return RunResult{}, err
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0xf11b))
	detail, err := flipBytes(target, 1+rng.IntN(3), rng)
	if err != nil {
		return RunResult{}, err
	}
	res := RunResult{Kind: spec.Kind, Detail: filepath.Base(target) + ": " + detail, Acked: len(w.l.acked), Destructive: true}
	res.Probe = probe(spec.Dir, 1, w.l)
	return res, nil
}

// flipTarget is the file a flip run damages.
func flipTarget(spec RunSpec) (string, error) {
	switch spec.Kind {
	case KindFlipLog:
		return filepath.Join(spec.Dir, events.LogFileName), nil
	case KindFlipReadModel:
		return filepath.Join(spec.Dir, hikoutei.ReadModelFile), nil
	}
	snaps, _ := filepath.Glob(filepath.Join(spec.Dir, snapshots.DirName, "*.sqlite"))
	if len(snaps) == 0 {
		return "", errors.New("the store took no snapshot")
	}
	sort.Strings(snaps)
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(spec.Dir, hikoutei.ReadModelFile+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
	}
	return snaps[len(snaps)-1], nil
}

// flipBytes XORs n random bytes of the file at path with random non-zero
// masks and describes where.
func flipBytes(path string, n int, rng *rand.Rand) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if len(data) == 0 {
		return "", fmt.Errorf("%s is empty", path)
	}
	detail := ""
	for range n {
		off := rng.IntN(len(data))
		data[off] ^= byte(1 + rng.IntN(255))
		detail += fmt.Sprintf(" @%d", off)
	}
	return "flipped" + detail, os.WriteFile(path, data, 0o600)
}
