package events

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// F1: a backup never writes inside any store directory — the one copied
// or another: one holding a log.db, one holding only a lease.toml or a
// read.sqlite, and their subdirectories (snapshots/), through a symbolic
// link or not, forced or not — and never replaces a file that is not a
// regular one (a FIFO, a device, a symbolic link), forced or not. Every
// refusal is backup_target_invalid, inside a store also
// target_inside_store, and nothing is written.
func TestF1_BackupRefusesEveryTargetInsideAnyStoreDirectoryAndNonRegularFiles(t *testing.T) {
	src := t.TempDir()
	buildLog(t, src, 10)
	l, err := OpenLog(filepath.Join(src, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	root := t.TempDir()
	other := filepath.Join(root, "other")
	buildLog(t, other, 30)
	must(t, os.MkdirAll(filepath.Join(other, "snapshots"), 0o700))
	leaseOnly := filepath.Join(root, "lease-only")
	must(t, os.MkdirAll(leaseOnly, 0o700))
	must(t, os.WriteFile(filepath.Join(leaseOnly, LeaseFileName), []byte("x"), 0o600))
	modelOnly := filepath.Join(root, "model-only")
	must(t, os.MkdirAll(modelOnly, 0o700))
	must(t, os.WriteFile(filepath.Join(modelOnly, readModelFileName), []byte("x"), 0o600))
	link := filepath.Join(t.TempDir(), "link")
	must(t, os.Symlink(other, link))
	before := fileHash(t, filepath.Join(other, LogFileName))

	inside := []string{
		filepath.Join(other, LogFileName), filepath.Join(other, LeaseFileName), filepath.Join(other, "x.db"),
		filepath.Join(other, "snapshots", "x.db"), filepath.Join(other, "new", "deeper", "x.db"),
		filepath.Join(leaseOnly, "x.db"), filepath.Join(modelOnly, "x.db"), filepath.Join(link, LogFileName),
		filepath.Join(link, "snapshots", "x.db"), filepath.Join(src, "x.db"),
	}
	ctx := context.Background()
	for _, target := range inside {
		for _, force := range []bool{false, true} {
			_, err := l.Backup(ctx, target, force)
			if !errors.Is(err, ErrBackupTarget) || !errors.Is(err, ErrTargetInsideStore) {
				t.Errorf("%s (force %v): %v, want backup_target_invalid: target_inside_store", target, force, err)
			}
		}
	}
	if fileHash(t, filepath.Join(other, LogFileName)) != before {
		t.Fatal("the other store's log changed")
	}
	for _, dir := range []string{other, filepath.Join(other, "snapshots"), leaseOnly, modelOnly} {
		if tmp, _ := filepath.Glob(filepath.Join(dir, "*.db")); len(tmp) > 1 || len(tmp) == 1 && filepath.Base(tmp[0]) != LogFileName {
			t.Errorf("files written into %s: %v", dir, tmp)
		}
		if tmp, _ := filepath.Glob(filepath.Join(dir, ".*")); len(tmp) > 0 {
			t.Errorf("temporary files in %s: %v", dir, tmp)
		}
	}

	plain := t.TempDir()
	fifo := filepath.Join(plain, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	sym := filepath.Join(plain, "sym")
	must(t, os.WriteFile(filepath.Join(plain, "real.db"), []byte("precious"), 0o600))
	must(t, os.Symlink(filepath.Join(plain, "real.db"), sym))
	for _, target := range []string{fifo, sym, "/dev/zero", "/dev/null", plain} {
		var nr *NotRegularError
		if _, err := l.Backup(ctx, target, true); !errors.Is(err, ErrBackupTarget) || !errors.As(err, &nr) {
			t.Errorf("%s (force): %v, want backup_target_invalid: not a regular file", target, err)
		}
	}
	for path, mode := range map[string]fs.FileMode{fifo: fs.ModeNamedPipe, sym: fs.ModeSymlink, "/dev/zero": fs.ModeCharDevice} {
		if st, err := os.Lstat(path); err != nil || st.Mode()&mode == 0 {
			t.Errorf("%s was replaced: %v %v", path, st, err)
		}
	}
	// A regular file outside every store is still replaced when forced.
	if _, err := l.Backup(ctx, filepath.Join(plain, "real.db"), true); err != nil {
		t.Fatalf("forced over a regular file: %v", err)
	}
}

// F1: CheckOutside is the one check every output shares.
func TestF1_CheckOutsideFindsTheNearestStoreAboveAPath(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "s")
	buildLog(t, store, 2)
	for path, want := range map[string]string{
		filepath.Join(store, "x"):                  store,
		filepath.Join(store, "a", "b", "c"):        store,
		filepath.Join(root, "elsewhere", "x"):      "",
		filepath.Join(root, "x"):                   "",
		filepath.Join(store, "snapshots", "1.sql"): store,
	} {
		_, err := CheckOutside(path)
		var ie *InsideStoreError
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", path, err)
		case want != "" && (!errors.As(err, &ie) || ie.Store != want):
			t.Errorf("%s: %v, want inside %s", path, err, want)
		}
	}
}

// F1: a running writer notices within one heartbeat that its log.db was
// replaced (a backup renamed over it) or removed, reports it once, and
// refuses every append from then on with log_file_replaced; the file it
// still has open is not appended to.
func TestF1_WriterNoticesItsLogFileReplacedOrRemovedWithinAHeartbeat(t *testing.T) {
	for _, how := range []string{"replaced", "removed", "renamed"} {
		t.Run(how, func(t *testing.T) {
			dir := t.TempDir()
			reported := make(chan error, 2)
			w, err := OpenWriter(dir, WriterOptions{Operation: "test", AcquireWait: -1, HeartbeatInterval: 20 * time.Millisecond,
				OnLogFileReplaced: func(err error) { reported <- err }})
			must(t, err)
			defer w.Close()
			_, err = w.Append(unit("sync/a", AnyVersion, 3))
			must(t, err)
			path := filepath.Join(dir, LogFileName)
			switch how {
			case "replaced":
				other := filepath.Join(t.TempDir(), "o")
				buildLog(t, other, 5)
				must(t, os.Rename(filepath.Join(other, LogFileName), path))
			case "removed":
				must(t, os.Remove(path))
			case "renamed":
				must(t, os.Rename(path, path+".old"))
			}
			select {
			case err := <-reported:
				if !errors.Is(err, ErrLogFileReplaced) {
					t.Fatalf("reported %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the heartbeat never noticed")
			}
			head, _ := w.Log().Head()
			if _, err := w.Append(unit("sync/b", AnyVersion, 1)); !errors.Is(err, ErrLogFileReplaced) {
				t.Fatalf("append after: %v", err)
			}
			if h, _ := w.Log().Head(); h != head {
				t.Fatalf("head moved %d -> %d", head, h)
			}
			select {
			case err := <-reported:
				t.Fatalf("reported twice: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}

// F1: the check at append needs no heartbeat: the first append after the
// replacement is refused.
func TestF1_AppendChecksTheLogFileWithoutWaitingForTheHeartbeat(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	must(t, os.Rename(filepath.Join(dir, LogFileName), filepath.Join(dir, "moved.db")))
	_, err = w.Append(unit("sync/a", AnyVersion, 1))
	if !errors.Is(err, ErrLogFileReplaced) {
		t.Fatalf("append: %v", err)
	}
}

// F10: restore checks its source before copying a byte: a FIFO, a device
// (/dev/zero) and a directory are refused (restore_source_invalid) at
// once, without reading; a file that is not a log (300 MB of zeros) is
// refused from its header (backup_corrupt) without being copied; and the
// copy of a good backup is bounded by its meta's high-water mark (bytes
// appended after it are not copied).
func TestF10_RestoreChecksItsSourceBeforeCopyingAndBoundsTheCopy(t *testing.T) {
	plain := t.TempDir()
	fifo := filepath.Join(plain, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o600))
	for _, src := range []string{fifo, "/dev/zero", plain} {
		to := filepath.Join(t.TempDir(), "new")
		done := make(chan error, 1)
		go func() { _, err := RestoreLog(src, to); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrRestoreSource) {
				t.Errorf("%s: %v, want restore_source_invalid", src, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: restore still running after 5 s (it reads the source)", src)
		}
		if _, err := os.Stat(to); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: the target was left behind: %v", src, err)
		}
	}
	zeros := filepath.Join(plain, "zeros.db")
	f, err := os.Create(zeros)
	must(t, err)
	must(t, f.Truncate(300<<20)) // sparse: nothing to write, 300 MB to read
	must(t, f.Close())
	to := filepath.Join(t.TempDir(), "new")
	start := time.Now()
	if _, err := RestoreLog(zeros, to); !errors.Is(err, ErrBackupCorrupt) {
		t.Fatalf("zeros: %v, want backup_corrupt", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("refusing 300 MB of zeros took %v: it was copied first", d)
	}

	src := buildLog(t, t.TempDir(), 40)
	good := filepath.Join(plain, "good.db")
	l, err := OpenLog(src, Options{ReadOnly: true})
	must(t, err)
	info, err := l.Backup(context.Background(), good, false)
	must(t, err)
	must(t, l.Close())
	af, err := os.OpenFile(good, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = af.Write(make([]byte, 5<<20))
	must(t, err)
	must(t, af.Close())
	got, err := RestoreLog(good, filepath.Join(t.TempDir(), "restored"))
	must(t, err)
	if got.Bytes != info.Bytes || got.SHA256 != info.SHA256 || got.Head != info.Head {
		t.Fatalf("restored %+v from a backup of %+v with 5 MB appended", got, info)
	}
}
