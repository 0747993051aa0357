package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// readModelDamages overwrite a closed store's read.sqlite: with random
// bytes, cut to 100 bytes, emptied.
var readModelDamages = map[string]func(t *testing.T, path string){
	"random bytes": func(t *testing.T, path string) {
		fi, err := os.Stat(path)
		mustNil(t, err)
		junk := make([]byte, fi.Size())
		_, _ = rand.Read(junk)
		mustNil(t, os.WriteFile(path, junk, 0o600))
	},
	"truncated to 100 bytes": func(t *testing.T, path string) { mustNil(t, os.Truncate(path, 100)) },
	"zero-length":            func(t *testing.T, path string) { mustNil(t, os.Truncate(path, 0)) },
}

// damagedReadModelStore is a closed store of 5 items whose read.sqlite
// damage overwrote; it returns the directory and the damaged bytes.
func damagedReadModelStore(t *testing.T, damage func(*testing.T, string)) (string, []byte) {
	t.Helper()
	dir := closedStoreOf(t, 5)
	path := filepath.Join(dir, hikoutei.ReadModelFile)
	for _, sidecar := range []string{"-wal", "-shm"} {
		_ = os.Remove(path + sidecar)
	}
	damage(t, path)
	raw, err := os.ReadFile(path)
	mustNil(t, err)
	return dir, raw
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	mustNil(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// On a closed store whose read.sqlite is garbage, status (text and
// --json) names it read_model_invalid with the replay that rebuilds it,
// still shows what the log tells (head, lease), leaves the checkpoint it
// cannot know null in --json (never a 0 that reads as a position), exits 1, and changes
// nothing in the directory; the replay it names makes status whole.
func TestStatusReportsAnUnreadableReadModelAsReadModelInvalid(t *testing.T) {
	t.Parallel()
	for name, damage := range readModelDamages {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir, damaged := damagedReadModelStore(t, damage)
			before := dirNames(t, dir)
			code, out := runCLI(t, "status", "--dir", dir)
			if code != exitFailure || !strings.Contains(out, "READ MODEL INVALID") || !strings.Contains(out, "read_model_invalid") ||
				!strings.Contains(out, "hikoutei replay --dir "+shellWord(dir)) ||
				strings.Contains(out, "sqlite: prepare") {
				t.Fatalf("status: exit %d:\n%s", code, out)
			}
			code, jsonOut, errOut := runSplit("status", "--dir", dir, "--json")
			var st storeStatus
			if code != exitFailure || json.Unmarshal([]byte(jsonOut), &st) != nil || st.ReadModelCode != "read_model_invalid" ||
				st.ReadModelDetail == "" || st.NextStep != "hikoutei replay --dir "+shellWord(dir) ||
				st.LogHead == nil || *st.LogHead == 0 || st.LeaseEpoch == 0 || st.LeaseState != "released" || st.Disk == nil ||
				st.Checkpoint != nil || !strings.Contains(jsonOut, `"checkpoint":null`) {
				t.Fatalf("status --json: exit %d:\n%s%s", code, jsonOut, errOut)
			}
			if after := dirNames(t, dir); !slices.Equal(before, after) {
				t.Fatalf("status changed the store directory: %v, then %v", before, after)
			}
			if raw, err := os.ReadFile(filepath.Join(dir, hikoutei.ReadModelFile)); err != nil || !bytes.Equal(raw, damaged) {
				t.Fatalf("status changed read.sqlite (%v)", err)
			}
			if code, out := runCLI(t, "replay", "--dir", dir); code != exitOK {
				t.Fatalf("replay --dir: exit %d:\n%s", code, out)
			}
			code, jsonOut, errOut = runSplit("status", "--dir", dir, "--json")
			var whole storeStatus
			if code != exitOK || json.Unmarshal([]byte(jsonOut), &whole) != nil || whole.ReadModelCode != "" || whole.LogHead == nil ||
				whole.Checkpoint == nil || *whole.Checkpoint != *whole.LogHead {
				t.Fatalf("status after the replay: exit %d:\n%s%s", code, jsonOut, errOut)
			}
		})
	}
}

// The commands that read the read model (outbox, quarantine, conflicts,
// subscriptions, doctor) meet a garbage read.sqlite with read_model_invalid
// and the replay that rebuilds it, never SQLite's bare text, and exit 1;
// subscriptions no longer says "no subscriptions" of it.
func TestReadModelCommandsReportAnUnreadableReadModelAsReadModelInvalid(t *testing.T) {
	t.Parallel()
	for name, damage := range readModelDamages {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir, _ := damagedReadModelStore(t, damage)
			for _, args := range [][]string{{"outbox", "list"}, {"outbox", "show", "e1"}, {"quarantine", "list"},
				{"quarantine", "show", "q1"}, {"conflicts", "list"}, {"conflicts", "show", "c1"}, {"subscriptions"}, {"doctor"}} {
				code, out := runCLI(t, append(args, "--dir", dir)...)
				if code != exitFailure || !strings.Contains(out, "read_model_invalid") || !strings.Contains(out, "hikoutei replay --dir") ||
					strings.Contains(out, "no subscriptions") {
					t.Errorf("%v: exit %d:\n%s", args, code, out)
				}
				if args[0] != "doctor" && strings.Contains(out, "sqlite:") {
					t.Errorf("%v prints SQLite's bare text:\n%s", args, out)
				}
			}
		})
	}
}

// A read.sqlite that is not a file (a FIFO, a directory) is never opened:
// status, outbox and doctor answer at once (a FIFO opened for reading
// waits for a writer forever) with read_model_invalid.
func TestReadModelCommandsNeverOpenAReadModelThatIsNotAFile(t *testing.T) {
	t.Parallel()
	plant := map[string]func(string) error{
		"FIFO":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"directory": func(p string) error { return os.Mkdir(p, 0o700) },
	}
	for kind, plantAt := range plant {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			dir := closedStoreOf(t, 3)
			path := filepath.Join(dir, hikoutei.ReadModelFile)
			for _, suffix := range []string{"", "-wal", "-shm"} {
				_ = os.Remove(path + suffix)
			}
			mustNil(t, plantAt(path))
			for _, args := range [][]string{{"status"}, {"outbox", "list"}, {"doctor"}} {
				code, out := runCLIWithin(t, append(args, "--dir", dir)...)
				if code != exitFailure || !strings.Contains(out, "read_model_invalid") || !strings.Contains(out, "not a file") {
					t.Errorf("%v: exit %d:\n%s", args, code, out)
				}
			}
		})
	}
}

// A read.sqlite that is a symbolic link to a file that is gone is a
// missing read model: status --json says read_model_missing with the
// replay that builds it (it printed no JSON, only "no read model"), and
// that replay makes status whole.
func TestStatusReportsAReadModelLinkToAMissingFileAsMissing(t *testing.T) {
	t.Parallel()
	dir := storeWithReadModelLink(t, func(path string) string { return filepath.Join(filepath.Dir(path), "gone.sqlite") })
	code, jsonOut, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if code != exitOK || json.Unmarshal([]byte(jsonOut), &st) != nil || st.ReadModelCode != "read_model_missing" ||
		st.NextStep != "hikoutei replay --dir "+shellWord(dir) || st.LogHead == nil || *st.LogHead == 0 {
		t.Fatalf("status --json: exit %d:\n%s\nstderr: %s", code, jsonOut, errOut)
	}
	if code, out := runCLI(t, "replay", "--dir", dir); code != exitOK {
		t.Fatalf("replay: exit %d:\n%s", code, out)
	}
	code, jsonOut, errOut = runSplit("status", "--dir", dir, "--json")
	st = storeStatus{}
	if code != exitOK || json.Unmarshal([]byte(jsonOut), &st) != nil || st.ReadModelCode != "" || st.Checkpoint == nil {
		t.Fatalf("status --json after the replay: exit %d:\n%s\nstderr: %s", code, jsonOut, errOut)
	}
}

// storeWithReadModelLink is a closed store of 5 items whose read.sqlite
// (its -wal and -shm removed) is a symbolic link to target(its path).
func storeWithReadModelLink(t *testing.T, target func(path string) string) string {
	t.Helper()
	dir := closedStoreOf(t, 5)
	path := filepath.Join(dir, hikoutei.ReadModelFile)
	for _, s := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + s)
	}
	mustNil(t, os.Symlink(target(path), path))
	return dir
}
