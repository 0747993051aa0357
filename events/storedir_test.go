package events

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

func listDir(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	entries, err := os.ReadDir(dir)
	must(t, err)
	for _, e := range entries {
		info, err := e.Info()
		must(t, err)
		out[e.Name()] = info.Size()
	}
	return out
}

func TestI26_NoNewStoreWhereOneExisted(t *testing.T) {
	cases := map[string]func(dir string){
		"read model left, log missing": func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "read.sqlite"), []byte("projection"), 0o600))
		},
		"snapshots and lease file left, log empty": func(dir string) {
			must(t, os.Mkdir(filepath.Join(dir, "snapshots"), 0o700))
			must(t, os.WriteFile(filepath.Join(dir, LeaseFileName), []byte("x"), 0o600))
			must(t, os.WriteFile(filepath.Join(dir, LogFileName), nil, 0o600))
		},
		"unrelated file": func(dir string) {
			must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600))
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			setup(dir)
			before := listDir(t, dir)
			_, err := OpenWriter(dir, WriterOptions{HeartbeatInterval: -1, AcquireWait: -1})
			var missing *StoreLogMissingError
			if !errors.Is(err, ErrStoreLogMissing) || !errors.As(err, &missing) || len(missing.Found) == 0 {
				t.Fatalf("open: %v", err)
			}
			if after := listDir(t, dir); !reflect.DeepEqual(before, after) {
				t.Fatalf("directory changed: %v -> %v", before, after)
			}
		})
	}
}

func TestI26_NewStoreOnlyInEmptyOrMissingDirectory(t *testing.T) {
	empty := t.TempDir()
	missing := filepath.Join(t.TempDir(), "new")
	interrupted := t.TempDir() // a crash while creating left an empty log.db
	must(t, os.WriteFile(filepath.Join(interrupted, LogFileName), nil, 0o600))
	for _, dir := range []string{empty, missing, interrupted} {
		w, err := OpenWriter(dir, WriterOptions{HeartbeatInterval: -1, AcquireWait: -1})
		must(t, err)
		must(t, w.Close())
		st, err := os.Stat(filepath.Join(dir, LogFileName))
		must(t, err)
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: mode %v", dir, st.Mode())
		}
	}
}

func TestBeforeLeaseRunsBeforeAnythingIsAppended(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{HeartbeatInterval: -1})
	must(t, err)
	head, _ := w.Log().Head()
	must(t, w.Close())
	var seen uint64
	stop := errors.New("stop")
	_, err = OpenWriter(dir, WriterOptions{HeartbeatInterval: -1, BeforeLease: func(l *Log) error {
		seen, _ = l.Head()
		return stop
	}})
	if !errors.Is(err, stop) {
		t.Fatalf("open: %v", err)
	}
	l, err := OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	after, _ := l.Head()
	if seen != head+1 || after != seen { // +1: Close recorded lease.released
		t.Fatalf("head before close %d, seen by the hook %d, after %d", head, seen, after)
	}
}

// A directory holding only what a restore interrupted before it named
// log.db leaves (its copy of the log and the segments it copied) is named
// restore_incomplete, with the next step; Open creates nothing there, and
// a restore into it is refused with both codes. With anything else in it,
// it is the damaged store it was before.
func TestI26_AnInterruptedRestoreIsNamedAndNoStoreIsMadeOverIt(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "."+LogFileName+".tmp-123"), []byte("partial copy"), 0o600))
	must(t, os.Mkdir(filepath.Join(dir, SegmentsDir), 0o700))
	var left *RestoreIncompleteError
	if err := RequireLog(dir); !errors.As(err, &left) || !errors.Is(err, ErrRestoreIncomplete) ||
		!reflect.DeepEqual(left.Found, []string{".log.db.tmp-123", SegmentsDir + "/"}) {
		t.Fatalf("RequireLog of an interrupted restore: %v", err)
	}
	before := listDir(t, dir)
	if _, err := OpenWriter(dir, WriterOptions{}); !errors.Is(err, ErrRestoreIncomplete) {
		t.Fatalf("OpenWriter over an interrupted restore: %v", err)
	}
	if after := listDir(t, dir); !reflect.DeepEqual(before, after) {
		t.Fatalf("OpenWriter changed the directory: %v, then %v", before, after)
	}
	if _, err := RestoreLog(filepath.Join(t.TempDir(), "backup.db"), dir); !errors.Is(err, ErrRestoreTarget) || !errors.Is(err, ErrRestoreIncomplete) {
		t.Fatalf("a restore into an interrupted restore's directory: %v", err)
	}
	must(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o600))
	if err := RequireLog(dir); errors.Is(err, ErrRestoreIncomplete) || !errors.Is(err, ErrStoreLogMissing) {
		t.Fatalf("RequireLog with another file beside the copy: %v", err)
	}
}

// A directory holding the copy of the log of a restore that still runs
// (its process id in the name) is named as a restore under way, with
// "wait" as the next step, not as an interrupted one to remove: a second
// restore into the same directory was told to rm -r the first's target.
func TestI26_ARestoreUnderWayIsNotNamedInterrupted(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf(".%s.tmp-%d-77", LogFileName, os.Getpid())), []byte("copying"), 0o600))
	var left *RestoreIncompleteError
	if err := RequireLog(dir); !errors.As(err, &left) || left.Running != os.Getpid() ||
		!strings.Contains(err.Error(), "wait for it") || strings.Contains(err.Error(), "rm -r") {
		t.Fatalf("RequireLog of a restore under way: %v", err)
	}
}

// A log.db that is not a file (a FIFO, a directory, a link that loops), beside a store's
// other files or alone, is the store's missing log, named for what it
// is: the writer does not open it (a FIFO would hang the open, and alone
// it was taken for a new store's: "has no log.db", then opened), nothing
// in the directory changes, and the message says "a FIFO named log.db,
// not a file" instead of calling it empty.
func TestI26_ALogThatIsNotAFileIsNamedSoAndNotOpened(t *testing.T) {
	kinds := map[string]func(path string) error{
		"FIFO":      func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"directory": func(path string) error { return os.Mkdir(path, 0o700) },
		// a link to itself: its stat loops
		"symbolic link that cannot be followed": func(path string) error { return os.Symlink(LogFileName, path) },
	}
	for kind, create := range kinds {
		for _, alone := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s alone=%v", kind, alone), func(t *testing.T) {
				dir := t.TempDir()
				if !alone {
					must(t, os.WriteFile(filepath.Join(dir, "read.sqlite"), []byte("projection"), 0o600))
				}
				must(t, create(filepath.Join(dir, LogFileName)))
				before := listDir(t, dir)
				var missing *StoreLogMissingError
				if err := RequireLog(dir); !errors.As(err, &missing) || missing.Kind != kind {
					t.Errorf("RequireLog: %v; want store_log_missing naming a %s", err, kind)
				}
				_, err := OpenWriter(dir, WriterOptions{HeartbeatInterval: -1, AcquireWait: -1})
				if !errors.Is(err, ErrStoreLogMissing) || !errors.As(err, &missing) || missing.Kind != kind ||
					!strings.Contains(err.Error(), "a "+kind+" named log.db, not a file") || strings.Contains(err.Error(), "empty") {
					t.Fatalf("open: %v", err)
				}
				if after := listDir(t, dir); !reflect.DeepEqual(before, after) {
					t.Fatalf("directory changed: %v -> %v", before, after)
				}
			})
		}
	}
}
