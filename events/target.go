package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// readModelFileName is the read model's file in a store directory (the
// projector's FileName; events does not import the projector).
const readModelFileName = "read.sqlite"

// storeMarkers are the files whose presence makes a directory a store
// directory: its log, its lease file, its read model.
var storeMarkers = []string{LogFileName, LeaseFileName, readModelFileName}

// isStoreDir reports whether dir holds any of storeMarkers (of any file
// type: a dangling link named log.db still marks a store).
func isStoreDir(dir string) bool {
	for _, name := range storeMarkers {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// InsideStoreError is why an output path was refused: it lies inside
// the store directory Store (that directory or below it). It matches
// ErrTargetInsideStore.
type InsideStoreError struct {
	Path  string // the path as given
	Store string // the store directory it lies in (symbolic links resolved)
}

func (e *InsideStoreError) Error() string {
	return fmt.Sprintf("%s: %s is inside the store directory %s (a store's directory is written only by that store): write it outside every store directory",
		ErrTargetInsideStore, e.Path, e.Store)
}

// Is makes errors.Is(err, ErrTargetInsideStore) hold.
func (e *InsideStoreError) Is(target error) bool { return target == ErrTargetInsideStore }

// CheckOutside is the one check every command that writes output runs
// on its target (a backup, a restored or salvaged store's directory, a
// replayed read model, a scratch copy): a store directory is never the
// target of another command's output. It refuses path when a directory
// at or above path's parent — symbolic links resolved, a missing tail
// ignored — holds a log.db, lease.toml or read.sqlite
// (*InsideStoreError, ErrTargetInsideStore). It returns path made
// absolute with its parent's symbolic links resolved (for a missing
// parent: its nearest existing ancestor's).
func CheckOutside(path string) (string, error) {
	if path == "" {
		return "", errors.New("no target path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	parent, rest, err := resolveExisting(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("directory of %s: %w", path, err)
	}
	for dir := parent; ; dir = filepath.Dir(dir) {
		if isStoreDir(dir) {
			return "", &InsideStoreError{Path: path, Store: dir}
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	return filepath.Join(parent, rest, filepath.Base(abs)), nil
}

// resolveExisting resolves the symbolic links of dir's nearest existing
// ancestor (dir itself when it exists) and returns it with the missing
// rest of dir.
func resolveExisting(dir string) (string, string, error) {
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return real, rest, nil
		}
		up := filepath.Dir(dir)
		if !errors.Is(err, fs.ErrNotExist) || up == dir {
			return "", "", err
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = up
	}
}

// NotRegularError is why an existing output target was refused: it is
// not a regular file (a directory, device, FIFO, socket or symbolic
// link), which a command never replaces, --force or not; or a source a
// command must read as a file (Source: restore --from), which only an
// existing regular file can be.
type NotRegularError struct {
	Path   string
	Mode   fs.FileMode
	Source bool // the path was given to be read (restore --from), not written
}

func (e *NotRegularError) Error() string {
	if e.Source {
		return fmt.Sprintf("%s is %s, not a regular file: give the path of a backup file written by `hikoutei backup`", e.Path, describeMode(e.Mode))
	}
	return fmt.Sprintf("%s is %s, not a regular file: give the path of a new or regular file", e.Path, describeMode(e.Mode))
}

func describeMode(m fs.FileMode) string {
	if k := FileKind(m); k != "" && k != "special file" {
		return "a " + k
	}
	return "not a regular file (mode " + m.String() + ")"
}

// CheckFile checks that the log's path still names the file this Log
// has open: a log.db replaced (a backup renamed over it, a file moved
// there), renamed away or removed under a running store would take every
// commit appended to the open file with it when the store closes. Once it
// found the path changed, it returns the same error (ErrLogFileReplaced)
// from then on (the writer's heartbeat calls it; every append too) and
// appends fail with it. A path it cannot stat for another reason is not
// a finding. Read-only logs are never checked.
func (l *Log) CheckFile() error {
	if p := l.replaced.Load(); p != nil {
		return *p
	}
	if l.readOnly || l.opened == nil {
		return nil
	}
	path := l.db.Path()
	cur, err := os.Stat(path)
	var why string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "was removed or renamed away"
	case err != nil:
		return nil
	case !os.SameFile(cur, l.opened):
		why = "was replaced by another file"
	default:
		return nil
	}
	ferr := fmt.Errorf("%w: %s %s while this store had it open: commits are refused (nothing appended to the open file would be found at that path again); "+
		"the open file is the only copy of what it holds: back it up before stopping the store (`hikoutei backup --dir %s --out FILE`, "+
		"written by this process through its administrative channel; Store.Backup), then stop it and find out what replaced it "+
		"(hikoutei doctor, hikoutei audit verify)", ErrLogFileReplaced, path, why, filepath.Dir(path))
	l.replaced.CompareAndSwap(nil, &ferr)
	return *l.replaced.Load()
}
