package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// sqliteSuffixes are the files SQLite keeps beside a database.
var sqliteSuffixes = []string{"", "-wal", "-shm"}

// checkTarget refuses a read-model target a replay must not write: a path
// inside a store directory (the replayed store's or any other, as
// events.CheckOutside defines it: a store's files are only ever written
// by the store), a directory or any other file that is not a regular
// one, and — unless force — an existing file or leftover -wal/-shm beside
// it. It runs before anything is written or removed.
func checkTarget(target string, force bool) error {
	if target == "" {
		return fmt.Errorf("%w: no target path", ErrReplayTargetInStore)
	}
	real, err := events.CheckOutside(target)
	var inside *events.InsideStoreError
	switch {
	case errors.As(err, &inside):
		return fmt.Errorf("%w: %w", ErrReplayTargetInStore, err)
	case err != nil:
		return fmt.Errorf("replay target: %w", err)
	}
	return checkTargetFiles(real, target, force)
}

func checkTargetFiles(real, shown string, force bool) error {
	for _, suffix := range sqliteSuffixes {
		st, err := os.Lstat(real + suffix)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("replay target: %w", err)
		case !st.Mode().IsRegular():
			return fmt.Errorf("%w: %w", ErrReplayTarget, &events.NotRegularError{Path: shown + suffix, Mode: st.Mode()})
		case !force:
			return fmt.Errorf("%w: %s exists (the command replaces it with --force; Go callers pass force)", ErrReplayTarget, shown+suffix)
		}
	}
	return nil
}

// buildThenInstall builds a read model into a temporary file beside target
// (replayTemp) and renames it onto target only once complete, so a failed
// or interrupted replay leaves target as it was (a killed one leaves the
// temporary file, which the next replay into the folder removes:
// sweepReplayTemps). With force an existing
// target (checked by checkTarget) is replaced; its -wal/-shm are removed
// first, so SQLite never pairs them with the new file.
func buildThenInstall(target string, force bool, build func(tmp string) (uint64, error)) (uint64, error) {
	tmp := replayTemp(target, time.Now(), os.Getpid())
	cp, err := build(tmp)
	failpoint.Inject(failpoint.ReplayBeforeInstall)
	if err == nil {
		err = checkTargetFiles(target, target, force) // nothing appeared meanwhile
	}
	if err == nil && force {
		err = removeSidecars(target)
	}
	if err == nil {
		err = os.Rename(tmp, target)
	}
	if err != nil {
		return 0, errors.Join(err, removeSQLite(tmp))
	}
	return cp, nil
}

func removeSidecars(path string) error {
	for _, suffix := range sqliteSuffixes[1:] {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", filepath.Base(path+suffix), err)
		}
	}
	return nil
}

func removeSQLite(path string) error {
	var errs []error
	for _, suffix := range sqliteSuffixes {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// setAside renames the read model at path and its -wal/-shm (which
// belong to it; also when it is gone) to path+".<kind>-<UTC time>"
// (disk.SetAsideName), never deleting them: a read model can hold the
// only trace of data the log lost. Health, status and `hikoutei
// setaside` report them; only that command removes them, when asked. It
// returns the new name ("" when none of them existed).
func setAside(path, kind string) (string, error) {
	if !anyExists(path) {
		return "", nil
	}
	aside := disk.SetAsideName(path, kind, time.Now())
	for _, suffix := range sqliteSuffixes {
		err := os.Rename(path+suffix, aside+suffix)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("set %s aside: %w", filepath.Base(path+suffix), err)
		}
	}
	return aside, nil
}

// anyExists reports whether path or its -wal/-shm exists.
func anyExists(path string) bool {
	for _, suffix := range sqliteSuffixes {
		if _, err := os.Lstat(path + suffix); err == nil {
			return true
		}
	}
	return false
}
