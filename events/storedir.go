package events

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hikoutei/hikoutei-go/internal/process"
)

// maxFoundNames bounds how many entries a StoreLogMissingError lists.
const maxFoundNames = 8

// prepareStoreDir makes dir ready for OpenWriter and enforces the creation
// rule: a log that exists and is non-empty is opened; a new log is created
// only in a missing or empty directory (ignoring an empty log.db and the
// temp files of an interrupted lease.toml write, both what a crash while
// creating a store leaves). Any other directory without a usable log is a
// damaged store: *StoreLogMissingError, and nothing is written.
func prepareStoreDir(dir string) error {
	err := RequireLog(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return err // nil: a store to open
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create store dir: %w", err)
	}
	return nil
}

// RequireLog checks that dir holds a non-empty log.db without opening it:
// nil when it does; *RestoreIncompleteError when the log is missing and
// the directory holds only what an interrupted restore leaves;
// *StoreLogMissingError when the log is missing or empty but the
// directory holds other files (a damaged store), or log.db is not a file
// (a FIFO, a directory: never a new store's, even alone); an error
// wrapping fs.ErrNotExist when the directory is missing or holds nothing.
func RequireLog(dir string) error {
	path := filepath.Join(dir, LogFileName)
	st, err := os.Stat(path)
	if err == nil && st.Mode().IsRegular() && st.Size() > 0 {
		return nil
	}
	kind := ""
	switch {
	case err == nil:
		kind = FileKind(st.Mode())
	case !errors.Is(err, fs.ErrNotExist) && isLink(path):
		kind = unfollowableLink // a loop, or a target it may not reach
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("stat log: %w", err)
	}
	found, storeFiles, ferr := storeDirEntries(dir)
	switch {
	case ferr != nil:
		return ferr
	case kind == "" && st == nil && restoreLeft(found):
		return &RestoreIncompleteError{Dir: dir, Found: found, Running: restoreRunning(found)}
	case len(found) > 0 || kind != "": // a log.db that is not a file is never a new store's
		return &StoreLogMissingError{Dir: dir, Found: found, Empty: st != nil, Kind: kind,
			StoreFiles: storeFiles || st != nil || kind != ""}
	}
	return fmt.Errorf("%s has no %s: %w", dir, LogFileName, fs.ErrNotExist)
}

// unfollowableLink is the kind of a log.db that is a symbolic link its
// stat cannot follow.
const unfollowableLink = "symbolic link that cannot be followed"

// isLink reports whether path itself is a symbolic link.
func isLink(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

// storeFilePrefixes name what a store creates in its directory besides
// log.db (a name, or the start of one): a directory holding none of them
// never was a store.
var storeFilePrefixes = []string{LogFileName, LeaseFileName, "read.sqlite", ".read.sqlite", "snapshots",
	"admin.sock", "nats-client.nk", "nats-mirror.nk", "wake.key"}

// storeDirEntries lists what dir holds besides what an interrupted store
// creation leaves (nil when dir does not exist), and whether any of it is
// a store's file.
func storeDirEntries(dir string) (found []string, storeFiles bool, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read store dir: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == LogFileName || strings.HasPrefix(name, "."+LeaseFileName+".tmp-") {
			continue
		}
		for _, p := range storeFilePrefixes {
			storeFiles = storeFiles || strings.HasPrefix(name, p)
		}
		if e.IsDir() {
			name += "/"
		}
		found = append(found, name)
	}
	sort.Strings(found)
	if len(found) > maxFoundNames {
		found = append(found[:maxFoundNames], fmt.Sprintf("… %d more", len(found)-maxFoundNames))
	}
	return found, storeFiles, nil
}

// restoreTempPrefix starts the name of the copy of the log a restore
// writes before it is verified and named log.db (writeAtomically's).
const restoreTempPrefix = "." + LogFileName + ".tmp-"

// restoreLeft reports whether found (a directory's entries, log.db
// missing) is what an interrupted restore leaves: its copy of the log,
// and the segments folder it fills, and nothing else.
func restoreLeft(found []string) bool {
	copied := false
	for _, name := range found {
		switch {
		case strings.HasPrefix(name, restoreTempPrefix):
			copied = true
		case name != SegmentsDir+"/":
			return false
		}
	}
	return copied
}

// restoreRunning is the id of a process that runs and whose copy of the
// log is among found (.log.db.tmp-<pid>-<random>): a restore under way,
// not an interrupted one. 0 when none (an earlier build's name has no
// process id).
func restoreRunning(found []string) int {
	for _, name := range found {
		rest, ok := strings.CutPrefix(name, restoreTempPrefix)
		pidText, _, hasPID := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if ok && hasPID && err == nil && pid > 0 && process.Runs(pid) {
			return pid
		}
	}
	return 0
}
