package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/disk"
)

// setAsideStore is a closed store holding a read model set aside 40 days
// ago (with its -wal), one set aside a day ago, and names like theirs
// that are not the store's: a directory, a symbolic link to the live read
// model, a name with no time. It returns the old copy's and the new one's
// names and the hostile ones.
func setAsideStore(t *testing.T) (dir string, old, recent string, hostile []string) {
	t.Helper()
	dir = itemStore(t)
	now := time.Now()
	old = filepath.Base(disk.SetAsideName("read.sqlite", disk.KindUnusable, now.Add(-40*24*time.Hour)))
	recent = filepath.Base(disk.SetAsideName("read.sqlite", disk.KindBeforeRebuild, now.Add(-24*time.Hour)))
	for name, n := range map[string]int{old: 4000, old + "-wal": 96, recent: 500, "read.sqlite.unusable-yesterday": 7} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	linked := filepath.Base(disk.SetAsideName("read.sqlite", disk.KindAheadOfLog, now.Add(-50*24*time.Hour)))
	folder := filepath.Base(disk.SetAsideName("read.sqlite", disk.KindUnusable, now.Add(-60*24*time.Hour)))
	mustNil(t, os.Symlink("read.sqlite", filepath.Join(dir, linked)))
	mustNil(t, os.Mkdir(filepath.Join(dir, folder), 0o700))
	return dir, old, recent, []string{linked, folder, "read.sqlite.unusable-yesterday", "read.sqlite", "log.db"}
}

func mustNil(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// status reports the set-aside read models (not the names that only look
// like them) with the code and the command that deletes them.
func TestStatusReportsTheSetAsideReadModels(t *testing.T) {
	dir, _, _, _ := setAsideStore(t)
	code, out := runCLI(t, "status", "--dir", dir, "--json")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var st struct{ Disk diskStatus }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	s := st.Disk.SetAside
	if s == nil || s.Copies != 2 || s.Bytes != 4596 || s.Code != "read_model_set_aside" || !strings.Contains(s.NextStep, "hikoutei setaside") ||
		time.Since(s.Oldest) < 39*24*time.Hour {
		t.Fatalf("set_aside = %+v\n%s", s, out)
	}
	code, out = runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "read_model_set_aside: 2 read models the store set aside") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// setaside --older-than 720h --delete deletes the copy set aside 40 days
// ago and its -wal, and keeps the newer copy, the live store's files and
// every name that is not a set-aside file of the store's.
func TestSetAsideDeletesOnlyTheCopiesOlderThanTheAge(t *testing.T) {
	dir, old, recent, hostile := setAsideStore(t)
	if code, out := runCLI(t, "setaside", "--dir", dir, "--delete"); code != exitUsage {
		t.Fatalf("--delete without --older-than: exit %d:\n%s", code, out)
	}
	code, out := runCLI(t, "setaside", "--dir", dir, "--older-than", "720h", "--delete", "--json")
	if code != exitOK {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var rep setAsideReport
	mustNil(t, json.Unmarshal([]byte(out), &rep))
	if len(rep.Files) != 2 || !rep.Files[0].Deleted || !rep.Files[1].Deleted || rep.Copies != 1 || rep.Bytes != 500 {
		t.Fatalf("report = %+v", rep)
	}
	for _, gone := range []string{old, old + "-wal"} {
		if _, err := os.Lstat(filepath.Join(dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s was kept: %v", gone, err)
		}
	}
	for _, kept := range append(hostile, recent) {
		if _, err := os.Lstat(filepath.Join(dir, kept)); err != nil {
			t.Errorf("%s was deleted: %v", kept, err)
		}
	}
	if code, out := runCLI(t, "status", "--dir", dir); code != exitOK || !strings.Contains(out, "1 read model the store set aside") ||
		!strings.Contains(out, "inspect it,") {
		t.Fatalf("status after: exit %d:\n%s", code, out)
	}
	if code, out := runCLI(t, "setaside", "--dir", dir); code != exitOK || !strings.Contains(out, "1 read model, 500 bytes") {
		t.Fatalf("setaside after: exit %d:\n%s", code, out)
	}
}

// While a process holds the store, --delete refuses (store_locked) and
// deletes nothing: a store opening may be setting a read model aside.
func TestSetAsideDeleteIsRefusedWhileAProcessHoldsTheStore(t *testing.T) {
	dir, old, _, _ := setAsideStore(t)
	holdStoreProcess(t, dir)
	code, out := runCLI(t, "setaside", "--dir", dir, "--older-than", "720h", "--delete")
	if code != exitFailure || !strings.Contains(out, "store_locked") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, old)); err != nil {
		t.Fatalf("%s was deleted while the store was held: %v", old, err)
	}
	if code, out := runCLI(t, "setaside", "--dir", dir); code != exitOK || !strings.Contains(out, old) {
		t.Fatalf("listing while held: exit %d:\n%s", code, out)
	}
}

// TestSetAsideNotDeletedFailsInBothForms: a file --delete could not
// delete makes the command fail (set_aside_not_deleted, exit 1) in the
// JSON form as in the human one, so a script sees it.
func TestSetAsideNotDeletedFailsInBothForms(t *testing.T) {
	rep := setAsideReport{Files: []setAsideJSON{}, Errors: []string{"remove x: operation not permitted"}}
	for _, asJSON := range []bool{false, true} {
		var out strings.Builder
		if err := printSetAside(&out, rep, asJSON); !errors.Is(err, errSetAsideNotDeleted) {
			t.Errorf("json %v: error %v, want set_aside_not_deleted", asJSON, err)
		}
	}
}

// TestSetAsideRefusesAnAgeThatIsNotPositive: --older-than 0 or a negative
// age is a usage error whether or not --delete is given (a negative age
// would list every copy as older than it).
func TestSetAsideRefusesAnAgeThatIsNotPositive(t *testing.T) {
	dir, _, _, _ := setAsideStore(t)
	for _, age := range []string{"0", "-1h"} {
		for _, extra := range [][]string{nil, {"--delete"}} {
			args := append([]string{"setaside", "--dir", dir, "--older-than", age}, extra...)
			if code, out := runCLI(t, args...); code != exitUsage {
				t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, out)
			}
		}
	}
}

// A copy dated a year ahead (a wrong clock, a copied directory) has no
// known age: --older-than lists it as FUTURE-DATED (future_dated in
// --json) and never deletes it; --copy NAME --delete deletes it, with its
// -wal, and nothing else.
func TestSetAsideFutureDatedCopyIsDeletedOnlyByName(t *testing.T) {
	dir, old, recent, _ := setAsideStore(t)
	future := filepath.Base(disk.SetAsideName("read.sqlite", disk.KindUnusable, time.Now().Add(365*24*time.Hour)))
	for _, name := range []string{future, future + "-wal"} {
		mustNil(t, os.WriteFile(filepath.Join(dir, name), make([]byte, 10), 0o600))
	}
	code, out := runCLI(t, "setaside", "--dir", dir, "--older-than", "720h", "--delete", "--json")
	var rep setAsideReport
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || len(rep.FutureDated) != 1 || rep.FutureDated[0] != future {
		t.Fatalf("--older-than --delete: exit %d:\n%s", code, out)
	}
	for _, f := range rep.Files {
		if strings.HasPrefix(f.File, future) {
			t.Fatalf("--older-than selected the future-dated %s:\n%s", f.File, out)
		}
	}
	code, out = runCLI(t, "setaside", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "FUTURE-DATED") || !strings.Contains(out, "--copy "+future+" --delete") {
		t.Fatalf("listing: exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "setaside", "--dir", dir, "--copy", future, "--delete", "--json")
	var named setAsideReport
	if code != exitOK || json.Unmarshal([]byte(out), &named) != nil || len(named.Files) != 2 || !named.Files[0].Deleted ||
		!named.Files[1].Deleted || named.FutureDated != nil || named.Copies != 1 {
		t.Fatalf("--copy --delete: exit %d:\n%s", code, out)
	}
	for _, name := range []string{future, future + "-wal", old, old + "-wal", recent} {
		_, err := os.Lstat(filepath.Join(dir, name))
		if gone := os.IsNotExist(err); gone != (name != recent) {
			t.Errorf("%s: gone %v (%v)", name, gone, err)
		}
	}
}

// status names a set-aside copy dated a year ahead, which no
// --older-than the SET ASIDE line suggests ever deletes, with the command
// that does (future_dated in --json); a copy of a known age is not named.
func TestStatusNamesAFutureDatedSetAsideCopy(t *testing.T) {
	dir, old, _, _ := setAsideStore(t)
	future := filepath.Base(disk.SetAsideName("read.sqlite", disk.KindUnusable, time.Now().Add(365*24*time.Hour)))
	mustNil(t, os.WriteFile(filepath.Join(dir, future), make([]byte, 10), 0o600))
	code, out := runCLI(t, "status", "--dir", dir)
	want := "setaside --dir " + shellWord(dir) + " --copy " + future + " --delete"
	if code != exitOK || !strings.Contains(out, "SET ASIDE FUTURE-DATED") || !strings.Contains(out, want) || strings.Contains(out, "--copy "+old) {
		t.Fatalf("status: exit %d, want a FUTURE-DATED line naming %s only:\n%s", code, future, out)
	}
	code, out = runCLI(t, "status", "--dir", dir, "--json")
	var st storeStatus
	if code != exitOK || json.Unmarshal([]byte(out), &st) != nil || st.Disk == nil || st.Disk.SetAside == nil ||
		!slices.Equal(st.Disk.SetAside.FutureDated, []string{future}) {
		t.Fatalf("status --json: exit %d:\n%s", code, out)
	}
}

// --delete holds the store through its log.db; a log.db that is not a
// file (here a directory in its place) is the store's missing log
// (store_log_missing, naming what it is), exit 1, and nothing is deleted.
func TestSetAsideDeleteRefusesALogItCannotOpen(t *testing.T) {
	dir, old, _, _ := setAsideStore(t)
	log := filepath.Join(dir, "log.db")
	mustNil(t, os.Rename(log, log+".kept"))
	mustNil(t, os.Mkdir(log, 0o700))
	mustNil(t, os.WriteFile(filepath.Join(log, "x"), make([]byte, 10), 0o600))
	code, out := runCLI(t, "setaside", "--dir", dir, "--older-than", "720h", "--delete")
	if code != exitFailure || !strings.Contains(out, "store_log_missing") || !strings.Contains(out, "a directory named log.db, not a file") ||
		!strings.Contains(out, "nothing deleted") {
		t.Fatalf("setaside --delete with log.db a directory: exit %d:\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, old)); err != nil {
		t.Fatalf("the old copy: %v", err)
	}
}

// --copy takes only the name of a copy the directory holds: another
// name, a sidecar's, or --copy with --older-than is a usage error; a copy
// it does not hold is not_set_aside (exit 1) and nothing is deleted, not
// even the copies named beside it.
func TestSetAsideCopyRefusesNamesThatAreNoCopy(t *testing.T) {
	dir, _, recent, _ := setAsideStore(t)
	absent := filepath.Base(disk.SetAsideName("read.sqlite", disk.KindUnusable, time.Now().Add(-100*24*time.Hour)))
	for _, args := range [][]string{{"--copy", "read.sqlite"}, {"--copy", "log.db", "--delete"}, {"--copy", recent + "-wal"},
		{"--copy", recent, "--older-than", "720h"}} {
		if code, out := runCLI(t, append([]string{"setaside", "--dir", dir}, args...)...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d:\n%s", args, code, exitUsage, out)
		}
	}
	code, out := runCLI(t, "setaside", "--dir", dir, "--copy", recent, "--copy", absent, "--delete")
	if code != exitFailure || !strings.Contains(out, "not_set_aside") || !strings.Contains(out, absent) {
		t.Fatalf("an absent copy: exit %d:\n%s", code, out)
	}
	if _, err := os.Lstat(filepath.Join(dir, recent)); err != nil {
		t.Fatalf("%s was deleted beside a name that is no copy: %v", recent, err)
	}
}
