package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/process"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Reason codes of the files an interrupted command leaves (status names
// them; docs/errors.md lists them).
const (
	// ReasonRebuildInterrupted: a read-model rebuild (`replay --dir`, or
	// the one `restore` ends with) was killed; the read model it was to
	// replace is as it was, or absent after a restore.
	ReasonRebuildInterrupted = "rebuild_interrupted"
	// ReasonCompactInterrupted: a compaction was killed before its
	// rename; log.db is intact.
	ReasonCompactInterrupted = "compact_interrupted"
	// ReasonReadModelMissing: the store has a log but no read.sqlite (a
	// restore killed before its rebuild finished, or the file deleted).
	ReasonReadModelMissing = "read_model_missing"
	// ReasonAdoptInterrupted: an adoption's mark is left in the store
	// directory by a process that no longer runs (adoptmark.go): it did
	// not keep its tab.
	ReasonAdoptInterrupted = "adopt_interrupted"
)

// rebuildTemp is the file RebuildReadModel builds the read model in,
// inside the store directory.
var rebuildTemp = "." + projector.FileName + ".rebuild"

// Leftover is a file of the store directory that a command left when it
// was interrupted (killed, or the machine stopped): what it is, its size,
// and its reason code. Opening the store removes each (the writer's lock
// proves no such command runs), as the next command of the same kind does.
type Leftover struct {
	Name  string // the file's name in the store directory
	Bytes int64
	Code  string // ReasonRebuildInterrupted, ReasonCompactInterrupted
}

// Leftovers lists the files interrupted commands left in the store
// directory dir (nil when none, or when dir cannot be read).
func Leftovers(dir string) []Leftover {
	var out []Leftover
	for _, n := range leftoverNames {
		name, code := n[0], n[1]
		for _, suffix := range sidecarSuffixes {
			if st, err := os.Lstat(filepath.Join(dir, name+suffix)); err == nil && st.Mode().IsRegular() {
				out = append(out, Leftover{Name: name + suffix, Bytes: st.Size(), Code: code})
			}
		}
	}
	return out
}

// leftoverNames are the names of the temporary files the store's own
// commands write in its directory, with their reason codes (each with
// the sidecarSuffixes SQLite may add).
var leftoverNames = [][2]string{
	{rebuildTemp, ReasonRebuildInterrupted},
	{events.LogFileName + events.CompactSuffix, ReasonCompactInterrupted},
}

// sidecarSuffixes are a temporary file's name and the files SQLite keeps
// beside it (a rebuild in progress has a journal).
var sidecarSuffixes = []string{"", "-wal", "-shm", "-journal"}

// removeLeftovers removes, from the store directory the writer now
// holds, the files interrupted commands left: none of those commands can
// run while the writer holds the log's lock (a rebuild holds it shared, a
// compaction exclusive), so none is in use. Each removal is logged.
func (e *Engine) removeLeftovers() {
	for _, l := range Leftovers(e.dir) {
		err := os.Remove(filepath.Join(e.dir, l.Name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			e.log.Warn("could not remove a file an interrupted command left", "file", l.Name, "code", l.Code, "err", err.Error())
			continue
		}
		e.log.Info("removed a file an interrupted command left", "file", l.Name, "code", l.Code, "bytes", l.Bytes)
	}
}

// ReplayLeftover is a temporary file of an interrupted `replay --out`
// found beside a replay's target: removed, or kept with why.
type ReplayLeftover struct {
	Path    string
	Bytes   int64
	Removed bool
	Why     string // why it was kept, or whose it was
}

// replayTempTime is the time in a replay temporary file's name.
const replayTempTime = "20060102T150405.000000000"

// replayTemp names the temporary file a replay into target builds in:
// .NAME.replay-<UTC time>-<pid>, beside target. The process id tells a
// later replay whether its writer still runs (earlier builds wrote no
// process id).
func replayTemp(target string, now time.Time, pid int) string {
	return filepath.Join(filepath.Dir(target),
		"."+filepath.Base(target)+".replay-"+now.UTC().Format(replayTempTime)+"-"+strconv.Itoa(pid))
}

// replayTempName matches the names of replay temporary files (any
// target's): the time, the process id (absent from earlier builds'), and
// a SQLite sidecar suffix.
var replayTempName = regexp.MustCompile(`^\..+\.replay-\d{8}T\d{6}\.\d{9}(?:-(\d+))?(-wal|-shm|-journal)?$`)

// sweepReplayTemps removes, from the folder of target, the temporary
// files of replays that were interrupted: a name of ours whose process
// no longer runs. One of an earlier build (no process id) or of a process
// that still runs is kept. Each is reported to report (nil: none).
func sweepReplayTemps(target string, report func(ReplayLeftover)) {
	dir := filepath.Dir(target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // the build that follows reports an unusable folder
	}
	for _, ent := range entries {
		m := replayTempName.FindStringSubmatch(ent.Name())
		if m == nil || !ent.Type().IsRegular() {
			continue
		}
		l := replayLeftover(filepath.Join(dir, ent.Name()), m[1])
		if report != nil {
			report(l)
		}
	}
}

// replayLeftover removes the replay temporary file at path, written by
// process pidText ("" when its name has none), when that process no
// longer runs.
func replayLeftover(path, pidText string) ReplayLeftover {
	l := ReplayLeftover{Path: path}
	if st, err := os.Lstat(path); err == nil {
		l.Bytes = st.Size()
	}
	pid, _ := strconv.Atoi(pidText)
	switch {
	case pid <= 0:
		l.Why = "its name carries no process id (an earlier build's): remove it once no replay writes beside this target"
	case pid == os.Getpid() || process.Runs(pid):
		l.Why = fmt.Sprintf("process %d, which wrote it, still runs", pid)
	default:
		err := os.Remove(path)
		l.Removed = err == nil || errors.Is(err, fs.ErrNotExist)
		l.Why = fmt.Sprintf("process %d, which wrote it, no longer runs", pid)
		if !l.Removed {
			l.Why += "; removing it failed: " + strings.TrimSpace(err.Error())
		}
	}
	return l
}
