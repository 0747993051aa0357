package storagefault

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// Kind names one kind of storage fault.
type Kind string

// The kinds of run, taken in turn by a campaign.
const (
	// KindDiskFull fills a small real filesystem (see Medium) until
	// commits are refused, frees space, and checks.
	KindDiskFull Kind = "disk_full"
	// KindWriteError makes one write fail (EIO or ENOSPC) at a durability
	// boundary: the log before and after its commit, the read model, a
	// snapshot, lease.toml.
	KindWriteError Kind = "write_error"
	// KindTornWrite leaves the log and the read model's WAL as a power cut
	// during a commit could: some of the commit's pages written, one of
	// them torn at a sector, the meta page only after every data page.
	KindTornWrite Kind = "torn_write"
	// KindFlipLog, KindFlipReadModel and KindFlipSnapshot flip bytes in a
	// closed store's log, read model or newest snapshot.
	KindFlipLog       Kind = "flip_log"
	KindFlipReadModel Kind = "flip_read_model"
	KindFlipSnapshot  Kind = "flip_snapshot"
)

// Kinds lists every kind in campaign order.
var Kinds = []Kind{KindDiskFull, KindWriteError, KindTornWrite, KindFlipLog, KindFlipReadModel, KindFlipSnapshot}

// RunSpec is one run, handed to its child process in config.EnvStorageRun.
type RunSpec struct {
	Kind Kind   `json:"kind"`
	Seed uint64 `json:"seed"`
	Dir  string `json:"dir"`            // an empty directory the run owns
	Size int64  `json:"size,omitempty"` // disk_full: the filesystem's size (0 = by the seed)
}

// RunResult is what a run's child reports.
type RunResult struct {
	Kind   Kind   `json:"kind"`
	Detail string `json:"detail"` // what was done: the size, the failpoint, the bytes flipped
	Acked  int    `json:"acked"`
	// Destructive: the fault destroyed bytes acknowledged data lived in
	// (flips). Such a run must report the damage or return the data; a
	// non-destructive one must return every acknowledged commit.
	Destructive bool  `json:"destructive"`
	Probe       Probe `json:"probe"`
	// Unreported counts refused commits after which Health().Local was nil.
	Unreported int `json:"unreported"`
	// Codes are the error codes of refused commits and opens, in order.
	Codes []string `json:"codes,omitempty"`
	// Problems are findings that are not lost data: a store that does not
	// recover once the fault is gone, a refusal that was not typed.
	Problems []string `json:"problems,omitempty"`
}

// resultPrefix starts the line a child prints its result on.
const resultPrefix = "storagefault-result: "

// ChildFromEnv runs the run described by config.EnvStorageRun and prints
// its result on out. ok is false when the variable is not set.
func ChildFromEnv(out io.Writer) (ok bool, err error) {
	raw := config.StorageRun()
	if raw == "" {
		return false, nil
	}
	var spec RunSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return true, fmt.Errorf("%s: %w", config.EnvStorageRun, err)
	}
	res, err := Execute(spec)
	if err != nil {
		return true, err
	}
	line, _ := json.Marshal(res)
	_, err = fmt.Fprintln(out, resultPrefix+string(line))
	return true, err
}

// Execute runs spec in this process (a child: a panic or a fault must
// end only it).
func Execute(spec RunSpec) (RunResult, error) {
	switch spec.Kind {
	case KindDiskFull:
		return runDiskFull(spec)
	case KindWriteError:
		return runWriteError(spec)
	case KindTornWrite:
		return runTornWrite(spec)
	case KindFlipLog, KindFlipReadModel, KindFlipSnapshot:
		return runFlip(spec)
	}
	return RunResult{}, fmt.Errorf("unknown run kind %q", spec.Kind)
}
