package disk

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A store directory with two set-aside read models (one with its
// write-ahead log) and names like theirs that are not theirs: a
// directory, a symbolic link to the live read model, a name with no
// valid time, the live read model and the log.
func setAsideDir(t *testing.T) (string, time.Time) {
	t.Helper()
	dir := t.TempDir()
	old := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	first := filepath.Base(SetAsideName(readModelFile, KindUnusable, old))
	second := filepath.Base(SetAsideName(readModelFile, KindBeforeRebuild, old.Add(48*time.Hour)))
	write(t, filepath.Join(dir, first), 100)
	write(t, filepath.Join(dir, first+"-wal"), 10)
	write(t, filepath.Join(dir, second), 1000)
	write(t, filepath.Join(dir, readModelFile), 7)
	write(t, filepath.Join(dir, logFile), 7)
	write(t, filepath.Join(dir, "read.sqlite.unusable-20261399T000000.000000000Z"), 5)
	if err := mkdir(filepath.Join(dir, "read.sqlite.unusable-20250101T000000.000000000Z")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(readModelFile, filepath.Join(dir, "read.sqlite.ahead-of-log-20250101T000000.000000000Z")); err != nil {
		t.Fatal(err)
	}
	return dir, old
}

func TestReadSetAsideCountsOnlyTheStoresCopies(t *testing.T) {
	dir, old := setAsideDir(t)
	s, err := ReadSetAside(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Copies != 2 || s.Bytes != 1110 || !s.Oldest.Equal(old) || len(s.Files) != 3 {
		t.Fatalf("set aside = %d copies, %d bytes, oldest %s, %d files; want 2, 1110, %s, 3", s.Copies, s.Bytes, s.Oldest, len(s.Files), old)
	}
	f, err := ReadFiles(dir)
	if err != nil || f.SetAside.Bytes != 1110 || f.Total() != 7+7+1110 {
		t.Fatalf("ReadFiles: set aside %d bytes, total %d, %v; want 1110, 1124", f.SetAside.Bytes, f.Total(), err)
	}
}

func TestRemoveSetAsideRefusesWhatIsNotACopy(t *testing.T) {
	dir, _ := setAsideDir(t)
	for _, name := range []string{"read.sqlite.ahead-of-log-20250101T000000.000000000Z", readModelFile, logFile,
		"read.sqlite.unusable-20250101T000000.000000000Z", "../read.sqlite.unusable-20250101T000000.000000000Z"} {
		if err := RemoveSetAside(dir, SetAsideFile{Name: name}); !errors.Is(err, ErrNotSetAside) {
			t.Errorf("RemoveSetAside(%s) = %v; want not_set_aside", name, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, name)); err != nil && name[0] != '.' {
			t.Errorf("%s was removed", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, readModelFile)); err != nil {
		t.Fatalf("the live read model: %v", err)
	}
}

// TestParseSetAsideRefusesATimeNoStoreWrote: a time before 2000 in a
// set-aside name is no store's (year 1 would read as no time at all, and
// the oldest copy's time would be lost).
func TestParseSetAsideRefusesATimeNoStoreWrote(t *testing.T) {
	for name, want := range map[string]bool{
		"read.sqlite.unusable-00010101T000000.000000000Z":       false,
		"read.sqlite.unusable-19991231T235959.999999999Z":       false,
		"read.sqlite.before-rebuild-20000101T000000.000000000Z": true,
		"read.sqlite.ahead-of-log-20261205T053225.194939182Z":   true,
	} {
		if _, ok := ParseSetAside(name); ok != want {
			t.Errorf("ParseSetAside(%q) ok = %v, want %v", name, ok, want)
		}
	}
}

// TestFutureDatedCopiesHaveNoAge: a copy dated more than FutureSlack
// after now is named by FutureDated (once, with its -wal) and no age
// selects it; Copy selects it by name, with its -wal; one within the
// slack is merely recent.
func TestFutureDatedCopiesHaveNoAge(t *testing.T) {
	dir, old := setAsideDir(t)
	now := old.Add(10 * 24 * time.Hour)
	future := filepath.Base(SetAsideName(readModelFile, KindUnusable, now.Add(400*24*time.Hour)))
	write(t, filepath.Join(dir, future), 50)
	write(t, filepath.Join(dir, future+"-wal"), 5)
	write(t, filepath.Join(dir, filepath.Base(SetAsideName(readModelFile, KindAheadOfLog, now.Add(time.Hour)))), 5)
	s, err := ReadSetAside(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.FutureDated(now); len(got) != 1 || got[0] != future {
		t.Fatalf("FutureDated = %v, want [%s]", got, future)
	}
	for _, f := range s.OlderThan(now.Add(-time.Hour)) {
		if f.Copy == future {
			t.Fatalf("OlderThan selected the future-dated %s", f.Name)
		}
	}
	if files := s.Copy(future); len(files) != 2 || files[0].Name != future || files[1].Name != future+"-wal" {
		t.Fatalf("Copy(%s) = %+v", future, files)
	}
	if files := s.Copy("read.sqlite.unusable-20300101T000000.000000000Z"); len(files) != 0 {
		t.Fatalf("Copy of a name the directory does not hold = %+v", files)
	}
}

// The filesystem's failures carry a stable code: a store directory that
// cannot be listed is store_dir_unreadable; a set-aside file that cannot
// be removed (here gone since it was listed) is set_aside_remove_failed.
func TestSetAsideFilesystemFailuresHaveCodes(t *testing.T) {
	dir, _ := setAsideDir(t)
	if _, err := ReadSetAside(filepath.Join(dir, logFile)); !errors.Is(err, ErrStoreDirUnreadable) {
		t.Errorf("ReadSetAside of a file = %v; want store_dir_unreadable", err)
	}
	s, err := ReadSetAside(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, s.Files[0].Name)); err != nil {
		t.Fatal(err)
	}
	if err := RemoveSetAside(dir, s.Files[0]); !errors.Is(err, ErrSetAsideRemoveFailed) {
		t.Errorf("RemoveSetAside of a file removed since = %v; want set_aside_remove_failed", err)
	}
}

func TestReadModelsSaysOneInTheSingular(t *testing.T) {
	for n, want := range map[int]string{0: "0 read models", 1: "1 read model", 2: "2 read models"} {
		if got := ReadModels(n); got != want {
			t.Errorf("ReadModels(%d) = %q, want %q", n, got, want)
		}
	}
}
