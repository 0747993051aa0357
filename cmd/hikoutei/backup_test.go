package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/projector"
)

// openItemStore opens a store of n items in this process: it holds the
// store (file lock, lease, administrative channel) until the test ends.
func openItemStore(t *testing.T, n int) *hikoutei.Store {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), storeWithItems(t, n), hikoutei.Options{HeartbeatInterval: -1, Operation: "backup-test"}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// logEvents reads every event of the log at path.
func logEvents(t *testing.T, path string) []events.Event {
	t.Helper()
	l, err := events.OpenLog(path, events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var out []events.Event
	if err := l.ReadFrom(1, func(e events.Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

var headLine = regexp.MustCompile(`at head (\d+)`)

// printedHead is the head a command's output names.
func printedHead(t *testing.T, out string) uint64 {
	t.Helper()
	m := headLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no head in %q", out)
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n
}

func TestBackupOfARunningStoreRestoresToAnIdenticalLogAndReadModel(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 40)
	out := filepath.Join(t.TempDir(), "shop.backup")
	code, text := runCLIWithin(t, "backup", "--dir", s.Dir(), "--out", out)
	if code != exitOK || !strings.Contains(text, "written by the running store") {
		t.Fatalf("backup: exit %d:\n%s", code, text)
	}
	head := printedHead(t, text)
	if sum := fileHash(t, out); !strings.Contains(text, "sha256 "+hex.EncodeToString(sum[:])) {
		t.Fatalf("the printed SHA-256 is not the file's:\n%s", text)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("backup file %v %v", st, err)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if code, text := runCLIWithin(t, "restore", "--from", out, "--to", restored); code != exitOK || !strings.Contains(text, fmt.Sprintf("at head %d", head)) {
		t.Fatalf("restore: exit %d:\n%s", code, text)
	}
	live, err := projector.TableDigests(s.ReadModelPath())
	if err != nil {
		t.Fatal(err)
	}
	dir := s.Dir()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	src, got := logEvents(t, filepath.Join(dir, events.LogFileName)), logEvents(t, filepath.Join(restored, events.LogFileName))
	if uint64(len(got)) != head || !reflect.DeepEqual(got, src[:head]) {
		t.Fatalf("restored %d events, the store held %d at head %d", len(got), len(src), head)
	}
	rebuilt, err := projector.TableDigests(filepath.Join(restored, hikoutei.ReadModelFile))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rebuilt, live) {
		t.Fatalf("restored read model differs from the live one:\n%v\n%v", rebuilt, live)
	}
}

func TestBackupOfAClosedStoreIsLocalAndRefusesBadTargets(t *testing.T) {
	dir := storeWithItems(t, 5)
	inside := filepath.Join(dir, "copy.db")
	if code, text := runCLI(t, "backup", "--dir", dir, "--out", inside, "--force"); code != exitFailure || !strings.Contains(text, "backup_target_invalid") {
		t.Fatalf("inside the store: exit %d:\n%s", code, text)
	}
	out := filepath.Join(t.TempDir(), "b.db")
	if code, text := runCLI(t, "backup", "--dir", dir, "--out", out); code != exitOK || !strings.Contains(text, "written by the closed store") {
		t.Fatalf("closed store: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "backup", "--dir", dir, "--out", out); code != exitFailure || !strings.Contains(text, "backup_target_invalid") {
		t.Fatalf("existing file: exit %d:\n%s", code, text)
	}
	if code, text := runCLI(t, "backup", "--dir", dir, "--out", out, "--force", "--json"); code != exitOK || !strings.Contains(text, `"sha256"`) {
		t.Fatalf("forced: exit %d:\n%s", code, text)
	}
	for _, args := range [][]string{{"backup", "--dir", dir}, {"backup", "--out", out}, {"restore", "--to", t.TempDir()},
		{"restore", "--from", out}, {"restore", "--from", out, "--store", "s", "--to", t.TempDir()}} {
		if code, text := runCLI(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d:\n%s", args, code, text)
		}
	}
}

// The running store is held by a process serving no channel: backup says
// so and names it, instead of copying a file a writer holds.
func TestBackupOfAStoreHeldWithoutAChannelNamesTheHolder(t *testing.T) {
	t.Parallel()
	dir := storeWithItems(t, 2)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Operation: "no-channel", NoAdmin: true}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	code, text := runCLIWithin(t, "backup", "--dir", dir, "--out", filepath.Join(t.TempDir(), "b.db"))
	if code != exitFailure || !strings.Contains(text, "admin_channel_absent") || !strings.Contains(text, "no-channel") {
		t.Fatalf("exit %d:\n%s", code, text)
	}
}

// A byte flipped inside one record of a backup: restore exits 3 naming
// that record's sequence and leaves nothing in the target.
func TestRestoreRefusesACorruptedBackupAtTheExactSequence(t *testing.T) {
	dir := storeWithItems(t, 30)
	out := filepath.Join(t.TempDir(), "b.db")
	if code, text := runCLI(t, "backup", "--dir", dir, "--out", out); code != exitOK {
		t.Fatalf("backup: exit %d:\n%s", code, text)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	victim, at, rec := uniqueRecord(t, logEvents(t, out), data)
	data[at+len(rec)-3] ^= 0x01
	if err := os.WriteFile(out, data, 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "new")
	code, text := runCLI(t, "restore", "--from", out, "--to", target)
	if code != exitDamage || !strings.Contains(text, "backup_corrupt") || !strings.Contains(text, fmt.Sprintf("seq %d:", victim.Seq)) {
		t.Fatalf("restore of a corrupted backup (record %d): exit %d:\n%s", victim.Seq, code, text)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatalf("target left behind: %v", err)
	}
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, text := runCLI(t, "restore", "--from", out, "--to", nonEmpty); code != exitFailure || !strings.Contains(text, "restore_target_not_empty") {
		t.Fatalf("non-empty target: exit %d:\n%s", code, text)
	}
}

func TestAuditDirOfARunningStoreAuditsACopyThroughTheChannel(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 12)
	var st admin.StatusResponse
	if err := admin.Call(context.Background(), s.Dir(), admin.OpStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	head := st.LogHead
	code, text := runCLIWithin(t, "audit", "--dir", s.Dir(), "--entity", "Item", "--json")
	if code != exitOK || !strings.Contains(text, fmt.Sprintf("audited a copy of its log at head %d", head)) {
		t.Fatalf("audit of a running store: exit %d:\n%s", code, text)
	}
	if n := strings.Count(text, `"type":"entity.`); n < 12 {
		t.Fatalf("%d entity events audited, want ≥ 12:\n%s", n, text)
	}
}

// uniqueRecord picks, from the middle of the log on, an event whose record
// bytes occur exactly once in the file data (a record can also linger in
// a free page, an older copy of its leaf page), and where they are.
func uniqueRecord(t *testing.T, evs []events.Event, data []byte) (events.Event, int, []byte) {
	t.Helper()
	for _, e := range evs[len(evs)/2:] {
		rec, err := events.MarshalRecord(e)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(data, rec) == 1 {
			return e, bytes.Index(data, rec), rec
		}
	}
	t.Fatal("no record occurs exactly once in the backup")
	return events.Event{}, 0, nil
}
