package events

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// sealedBackup seals a log twice (two segments), backs it up and returns
// the writer, the backup's path and its info.
func sealedBackup(t *testing.T) (*Writer, string, BackupInfo) {
	t.Helper()
	w := sealWriter(t, 200)
	_, err := w.Log().Seal(w.Fence(), 100)
	must(t, err)
	_, err = w.Log().Seal(w.Fence(), 230)
	must(t, err)
	out := filepath.Join(t.TempDir(), "copy.db")
	info, err := w.Log().Backup(context.Background(), out, false)
	must(t, err)
	return w, out, info
}

func TestI38_ABackupCarriesEverySegmentItsLogVouchesForAndRestoresThem(t *testing.T) {
	w, out, info := sealedBackup(t)
	segs, err := w.Log().Segments()
	must(t, err)
	if info.Segments != 2 || len(segs) != 2 {
		t.Fatalf("backup %+v of %d segments", info, len(segs))
	}
	for _, s := range segs {
		if _, err := readVouched(segstore.NewDir(BackupSegmentsDir(out)), s); err != nil {
			t.Fatalf("backup's %s: %v", s.Name, err)
		}
	}
	restored := filepath.Join(t.TempDir(), "new")
	rinfo, err := RestoreLog(out, restored)
	must(t, err)
	if rinfo.Segments != 2 || rinfo.Head != info.Head {
		t.Fatalf("restored %+v, backup %+v", rinfo, info)
	}
	l, err := OpenLog(filepath.Join(restored, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	rep := fullVerify(t, l, nil)
	if rep.Head != info.Head || rep.Segments != 2 || len(rep.Stray) != 0 {
		t.Fatalf("verify of the restored log: %+v", rep)
	}
	if got, want := readAll(t, l, 1), readAll(t, w.Log(), 1); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %d events, the store holds %d", len(got), len(want))
	}
}

// restoreRefused restores out into a new folder, expects err, and that
// nothing is left of the folder.
func restoreRefused(t *testing.T, out string, want error) *SegmentError {
	t.Helper()
	restored := filepath.Join(t.TempDir(), "new")
	_, err := RestoreLog(out, restored)
	var se *SegmentError
	if !errors.Is(err, want) || !errors.Is(err, ErrBackupCorrupt) || !errors.As(err, &se) {
		t.Fatalf("restore: %v, want %v", err, want)
	}
	if _, serr := os.Stat(restored); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("restore refused, yet %s is left: %v", restored, serr)
	}
	return se
}

func TestI38_ARestoreWhoseBackupLacksASegmentRefusesNamingIt(t *testing.T) {
	w, out, _ := sealedBackup(t)
	segs, err := w.Log().Segments()
	must(t, err)
	must(t, os.Remove(filepath.Join(BackupSegmentsDir(out), segs[1].Name)))
	if se := restoreRefused(t, out, ErrSegmentMissing); se.Name != segs[1].Name {
		t.Fatalf("names %s, want %s", se.Name, segs[1].Name)
	}
}

func TestI38_ARestoreWhoseBackupHoldsADamagedSegmentRefusesNamingIt(t *testing.T) {
	w, out, _ := sealedBackup(t)
	segs, err := w.Log().Segments()
	must(t, err)
	path := filepath.Join(BackupSegmentsDir(out), segs[0].Name)
	b, err := os.ReadFile(path)
	must(t, err)
	b[len(b)/2] ^= 0x40
	must(t, os.WriteFile(path, b, 0o600))
	if se := restoreRefused(t, out, ErrSegmentDamaged); se.Name != segs[0].Name {
		t.Fatalf("names %s, want %s", se.Name, segs[0].Name)
	}
}

func TestI38_ABackupRefusesToCopyADamagedSegmentOfItsStore(t *testing.T) {
	w := sealWriter(t, 200)
	rep, err := w.Log().Seal(w.Fence(), 100)
	must(t, err)
	must(t, os.WriteFile(rep.Path, []byte("not a segment"), 0o600))
	out := filepath.Join(t.TempDir(), "copy.db")
	_, err = w.Log().Backup(context.Background(), out, false)
	if !errors.Is(err, ErrSegmentDamaged) {
		t.Fatalf("backup: %v", err)
	}
	if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
		t.Fatalf("a refused backup left %s: %v", out, serr)
	}
}

// A backup made by an earlier build (a log with no segments, nothing
// beside it) restores as before, and a backup of a store with nothing
// sealed has no segments folder.
func TestI38_ABackupWithoutSegmentsIsAsBefore(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old.db")
	must(t, os.WriteFile(old, fuzzBases(t)[1], 0o600))
	restored := filepath.Join(t.TempDir(), "new")
	info, err := RestoreLog(old, restored)
	must(t, err)
	if info.Segments != 0 || info.Head == 0 {
		t.Fatalf("restored %+v", info)
	}
	if _, err := os.Stat(filepath.Join(restored, SegmentsDir)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a segments folder in a store restored from an earlier build's backup: %v", err)
	}
	l, err := OpenLog(filepath.Join(restored, LogFileName), Options{ReadOnly: true})
	must(t, err)
	must(t, l.Close())
	w := sealWriter(t, 20)
	out := filepath.Join(t.TempDir(), "copy.db")
	if info, err := w.Log().Backup(context.Background(), out, false); err != nil || info.Segments != 0 {
		t.Fatalf("backup %+v: %v", info, err)
	}
	if _, err := os.Stat(BackupSegmentsDir(out)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a segments folder beside the backup of a store with nothing sealed: %v", err)
	}
}

// A backup that fails while copying the segments (the second one is
// missing from the store) leaves neither the file nor a partial
// FILE.segments folder beside it.
func TestI38_AFailedBackupLeavesNoPartialSegmentsFolder(t *testing.T) {
	w := sealWriter(t, 200)
	_, err := w.Log().Seal(w.Fence(), 100)
	must(t, err)
	rep, err := w.Log().Seal(w.Fence(), 230)
	must(t, err)
	must(t, os.Remove(rep.Path))
	out := filepath.Join(t.TempDir(), "copy.db")
	if _, err := w.Log().Backup(context.Background(), out, false); !errors.Is(err, ErrSegmentMissing) {
		t.Fatalf("backup without a segment: %v, want segment_missing", err)
	}
	for _, p := range []string{out, BackupSegmentsDir(out)} {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s left after a failed backup: %v", filepath.Base(p), err)
		}
	}
}
