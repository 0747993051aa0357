package events

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// openRecordBytes returns the stored bytes of every record of an open log.
func openRecordBytes(t *testing.T, l *Log) map[uint64][]byte {
	t.Helper()
	out := map[uint64][]byte{}
	must(t, l.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
			out[binary.BigEndian.Uint64(k)] = bytes.Clone(v)
			return nil
		})
	}))
	return out
}

// A backup taken while a writer holds the log and keeps appending is the
// log as of one commit: restored, it holds exactly the records up to the
// head it reports, byte for byte, and the printed hash is the file's.
func TestBackupOfAWrittenLogRestoresToTheSameRecordsUpToItsHead(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	for i := range 20 {
		_, err := w.Append(unit(SyncStream(fmt.Sprint(i%3)), AnyVersion, 5))
		must(t, err)
	}
	out := filepath.Join(t.TempDir(), "copy.db")
	info, err := w.Log().Backup(context.Background(), out, false)
	must(t, err)
	for range 5 { // appends after the copy are not in it
		_, err := w.Append(unit("sync/after", AnyVersion, 3))
		must(t, err)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o600 || st.Size() != info.Bytes {
		t.Fatalf("copy %v %v, info %+v", st, err, info)
	}
	if fileHash(t, out) != info.SHA256 {
		t.Fatal("the reported SHA-256 is not the file's")
	}
	restored := filepath.Join(t.TempDir(), "new")
	rinfo, err := RestoreLog(out, restored)
	must(t, err)
	if rinfo.Head != info.Head || rinfo.StoreID != w.Log().StoreID() || rinfo.SHA256 != info.SHA256 {
		t.Fatalf("restored %+v, backup %+v", rinfo, info)
	}
	got, src := recordBytes(t, filepath.Join(restored, LogFileName)), openRecordBytes(t, w.Log())
	if uint64(len(got)) != info.Head {
		t.Fatalf("restored %d records, head %d", len(got), info.Head)
	}
	for seq, b := range got {
		if !bytes.Equal(b, src[seq]) {
			t.Fatalf("record %d differs", seq)
		}
	}
}

func TestBackupRefusesATargetInsideTheStoreAnExistingFileUnlessForcedAndADirectory(t *testing.T) {
	dir := t.TempDir()
	buildLog(t, dir, 10)
	l, err := OpenLog(filepath.Join(dir, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	ctx := context.Background()
	for _, target := range []string{filepath.Join(dir, "copy.db"), filepath.Join(dir, LogFileName), dir} {
		if _, err := l.Backup(ctx, target, true); !errors.Is(err, ErrBackupTarget) {
			t.Fatalf("%s: %v", target, err)
		}
	}
	other := t.TempDir()
	existing := filepath.Join(other, "x.db")
	must(t, os.WriteFile(existing, []byte("precious"), 0o600))
	if _, err := l.Backup(ctx, existing, false); !errors.Is(err, ErrBackupTarget) {
		t.Fatalf("existing: %v", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "precious" {
		t.Fatal("an existing file was replaced without force")
	}
	if _, err := l.Backup(ctx, existing, true); err != nil {
		t.Fatalf("forced: %v", err)
	}
	if _, err := l.Backup(ctx, other, true); !errors.Is(err, ErrBackupTarget) {
		t.Fatalf("directory: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(other, ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// A byte flipped inside one record of a backup makes restore refuse it,
// naming that record's sequence, and leaves no store behind.
func TestRestoreRefusesABackupWithACorruptedRecordAtItsSequence(t *testing.T) {
	path := buildLog(t, t.TempDir(), 200)
	recs := recordBytes(t, path)
	const victim = 137
	data, err := os.ReadFile(path)
	must(t, err)
	at := bytes.Index(data, recs[victim])
	if at < 0 || bytes.Count(data, recs[victim]) != 1 {
		t.Fatal("record not found once in the file")
	}
	data[at+len(recs[victim])/2] ^= 0x20
	bad := filepath.Join(t.TempDir(), "bad.db")
	must(t, os.WriteFile(bad, data, 0o600))
	target := filepath.Join(t.TempDir(), "new")
	_, err = RestoreLog(bad, target)
	var ce *CorruptRecordError
	if !errors.Is(err, ErrBackupCorrupt) || !errors.As(err, &ce) || ce.Seq != victim {
		t.Fatalf("restore of a corrupted backup = %v, want backup_corrupt at %d", err, victim)
	}
	if _, err := os.Stat(target); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the target was left: %v", err)
	}
}

func TestRestoreRefusesANonEmptyTargetAndLeavesItAlone(t *testing.T) {
	path := buildLog(t, t.TempDir(), 10)
	target := t.TempDir()
	must(t, os.WriteFile(filepath.Join(target, "keep"), []byte("x"), 0o600))
	if _, err := RestoreLog(path, target); !errors.Is(err, ErrRestoreTarget) {
		t.Fatalf("non-empty target: %v", err)
	}
	entries, _ := os.ReadDir(target)
	if len(entries) != 1 {
		t.Fatalf("target now holds %v", entries)
	}
	empty := t.TempDir()
	info, err := RestoreLog(path, empty)
	must(t, err)
	l, err := OpenLog(filepath.Join(empty, LogFileName), Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	src, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer src.Close()
	head, err := src.Head()
	must(t, err)
	if !reflect.DeepEqual(readAll(t, l, 1), readAll(t, src, 1)) || info.Head != head {
		t.Fatalf("restored log differs (head %d)", info.Head)
	}
}

// WriteTo is io.WriterTo: the bytes are a log that verifies healthy.
func TestRestoreIntoAStoreNamesItsLogAndHowAnInterruptedRestoreIsFinished(t *testing.T) {
	path := buildLog(t, t.TempDir(), 10)
	target := t.TempDir()
	_, err := RestoreLog(path, target)
	must(t, err)
	// What a restore killed while it built the read model leaves.
	must(t, os.WriteFile(filepath.Join(target, ".read.sqlite.rebuild"), []byte("x"), 0o600))
	_, err = RestoreLog(path, target)
	if !errors.Is(err, ErrRestoreTarget) || !strings.Contains(err.Error(), "already holds a store's "+LogFileName) ||
		!strings.Contains(err.Error(), "replay --dir") {
		t.Fatalf("restore into a store = %v, want restore_target_not_empty naming its log and the replay", err)
	}
}

func TestWriteToCopiesAHealthyLog(t *testing.T) {
	path := buildLog(t, t.TempDir(), 60)
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	var buf bytes.Buffer
	n, err := l.WriteTo(&buf)
	must(t, err)
	out := filepath.Join(t.TempDir(), LogFileName)
	must(t, os.WriteFile(out, buf.Bytes(), 0o600))
	v, err := VerifyLogFile(out)
	must(t, err)
	if n != int64(buf.Len()) || !v.Healthy() || v.Records == 0 {
		t.Fatalf("n %d len %d verification %+v", n, buf.Len(), v)
	}
}

// BenchmarkBackup copies a log of 20,000 records (temp file, fsync, link).
// Goal: well above 100 MB/s, so a channel backup of a 1 GB log stays far
// inside the channel's one-minute bound.
func BenchmarkBackup(b *testing.B) {
	path := buildLog(b, b.TempDir(), 20000)
	l, err := OpenLog(path, Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	out := b.TempDir()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		info, err := l.Backup(context.Background(), filepath.Join(out, fmt.Sprint(i)), false)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(info.Bytes)
	}
}

// A backup killed before it linked its copy leaves .NAME.tmp-<pid>-…
// beside its target: the next backup to that file removes the ones whose
// process no longer runs and says which; a running process's, an earlier
// build's (no process id) and other files stay.
func TestBackupRemovesTheCopiesOfKilledBackupsOnly(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	killed := exec.Command("sleep", "60")
	must(t, killed.Start())
	must(t, killed.Process.Kill())
	_ = killed.Wait()
	outDir := t.TempDir()
	out := filepath.Join(outDir, "backup.db")
	dead := filepath.Join(outDir, fmt.Sprintf(".backup.db.tmp-%d-123", killed.Process.Pid))
	kept := []string{fmt.Sprintf(".backup.db.tmp-%d-456", os.Getpid()), ".backup.db.tmp-789", ".other.db.tmp-1-2"}
	for _, name := range append([]string{filepath.Base(dead)}, kept...) {
		must(t, os.WriteFile(filepath.Join(outDir, name), []byte("half a copy"), 0o600))
	}
	info, err := w.Log().Backup(context.Background(), out, false)
	must(t, err)
	if !reflect.DeepEqual(info.Leftovers, []string{dead}) {
		t.Fatalf("Leftovers = %v, want %v", info.Leftovers, []string{dead})
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Fatalf("the killed backup's copy is still there: %v", err)
	}
	for _, name := range kept {
		if _, err := os.Stat(filepath.Join(outDir, name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
