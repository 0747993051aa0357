package events

import (
	"encoding/binary"
	"errors"
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// wantCorrupt fails unless err is a *LogCorruptError of check ("": any)
// on page (0: any).
func wantCorrupt(t *testing.T, what string, err error, check CorruptCheck, page uint64) {
	t.Helper()
	var ce *LogCorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrLogCorrupt) || check != "" && ce.Check != check || page != 0 && ce.Page != page {
		t.Fatalf("%s: err = %v, want log_corrupt %s check on page %d", what, err, check, page)
	}
}

// openFails opens path for writing and read-only, wanting the same typed
// error both ways and the file unchanged.
func openFails(t *testing.T, path string, check CorruptCheck, page uint64) {
	t.Helper()
	before, size := fileHash(t, path), fileSize(t, path)
	for _, ro := range []bool{false, true} {
		l, err := OpenLog(path, Options{ReadOnly: ro})
		if err == nil {
			l.Close()
		}
		wantCorrupt(t, "OpenLog", err, check, page)
	}
	if fileHash(t, path) != before || fileSize(t, path) != size {
		t.Fatalf("opening the damaged log changed it (size %d → %d)", size, fileSize(t, path))
	}
}

// verifyFinds runs VerifyLogFile and wants its first problem to be check on
// page, and the file unchanged.
func verifyFinds(t *testing.T, path string, check CorruptCheck, page uint64) *Verification {
	t.Helper()
	before := fileHash(t, path)
	v, err := VerifyLogFile(path)
	must(t, err)
	if v.Healthy() || len(v.Problems) == 0 {
		t.Fatalf("verification healthy: %+v", v)
	}
	wantCorrupt(t, "VerifyLogFile", v.Problems[0], check, page)
	if fileHash(t, path) != before {
		t.Fatal("verification wrote to the log")
	}
	return v
}

func TestRepro5_BranchPageCount(t *testing.T) {
	for name, delta := range map[string]int{"60000": 60000, "plus one": 1, "minus one": -1} {
		t.Run(name, func(t *testing.T) {
			path := buildLog(t, t.TempDir(), 800)
			pm := mapPages(t, path)
			if len(pm.branches["events"]) == 0 {
				t.Fatal("the events bucket has no branch page")
			}
			id := pm.branches["events"][0]
			count := uint16(len(pm.leaves["events"]) + delta)
			if delta == 60000 {
				count = 60000
			}
			setCount(t, path, pm.ps, id, count)
			openFails(t, path, CheckPage, id)
			v := verifyFinds(t, path, CheckPage, id)
			if v.Head != 802 || v.Missing.String() != "1-802" {
				t.Fatalf("head %d, missing %s: want every record reported unreachable", v.Head, v.Missing)
			}
		})
	}
}

func TestRepro5_TruncateTo8192(t *testing.T) {
	path := buildLog(t, t.TempDir(), 800)
	must(t, os.Truncate(path, 8192))
	openFails(t, path, CheckFile, 0)
	verifyFinds(t, path, CheckFile, 0)
	if fileSize(t, path) != 8192 {
		t.Fatalf("size %d", fileSize(t, path))
	}
}

func TestRepro5_TruncateTo524288(t *testing.T) {
	path := buildLog(t, t.TempDir(), 4000)
	pm := mapPages(t, path)
	if pm.hwm*uint64(pm.ps) <= 524288 || fileSize(t, path) <= 524288 {
		t.Fatalf("log too small for the case: %d pages, %d bytes", pm.hwm, fileSize(t, path))
	}
	must(t, os.Truncate(path, 524288))
	openFails(t, path, CheckFile, 0) // bbolt would grow the file back on its first commit
	verifyFinds(t, path, CheckFile, 0)
	if fileSize(t, path) != 524288 {
		t.Fatalf("size %d: the file grew", fileSize(t, path))
	}
}

// A file longer than its pages (zeros past the high-water mark, as
// `truncate -s` to a larger size leaves) is a valid log; opening it, for
// writing too, writes nothing until something is appended.
func TestRepro5_TruncateGrowsFileStillValidAndUntouched(t *testing.T) {
	path := buildLog(t, t.TempDir(), 800)
	must(t, os.Truncate(path, fileSize(t, path)+524288))
	before := fileHash(t, path)
	for _, ro := range []bool{true, false} {
		l, err := OpenLog(path, Options{ReadOnly: ro})
		must(t, err)
		if got := len(readAll(t, l, 1)); got != 802 {
			t.Fatalf("read %d records", got)
		}
		must(t, l.Close())
	}
	v, err := VerifyLogFile(path)
	must(t, err)
	if !v.Healthy() || v.Records != 802 {
		t.Fatalf("verification: %+v %v", v, v.Err())
	}
	if fileHash(t, path) != before {
		t.Fatal("opening an existing log wrote to it")
	}
}

func TestRepro5_LeafPageCount(t *testing.T) {
	t.Run("events leaf", func(t *testing.T) {
		path := buildLog(t, t.TempDir(), 800)
		pm := mapPages(t, path)
		id := pm.leaves["events"][0] // not the last leaf: the open checks do not read it
		setCount(t, path, pm.ps, id, 60000)
		before := fileHash(t, path)
		l, err := OpenLog(path, Options{Clock: NewManualClock(t0)})
		must(t, err)
		err = l.ReadFrom(1, func(Event) error { return nil })
		wantCorrupt(t, "ReadFrom", err, "", 0) // bbolt panics, or returns garbage the sequence check refuses
		_, err = l.AcquireLease(AcquireRequest{WriterID: "w", Operation: "test"})
		wantCorrupt(t, "AcquireLease after damage", err, "", 0)
		must(t, l.Close())
		if fileHash(t, path) != before {
			t.Fatal("the damaged log was written")
		}
		v := verifyFinds(t, path, CheckPage, id)
		if v.Missing.Count() == 0 || v.Records+v.Missing.Count() != 802 || v.Missing[0].First != 1 {
			t.Fatalf("records %d, missing %s", v.Records, v.Missing)
		}
	})
	t.Run("streams leaf", func(t *testing.T) { // doctor called this one healthy
		path := buildLog(t, t.TempDir(), 800)
		pm := mapPages(t, path)
		id := pm.leaves["streams"][len(pm.leaves["streams"])-1]
		setCount(t, path, pm.ps, id, 200)
		before := fileHash(t, path)
		l, err := OpenLog(path, Options{})
		if err == nil {
			_, err = l.StreamVersions([]string{SyncStream("1"), SyncStream("96")})
			l.Close()
		}
		wantCorrupt(t, "OpenLog or StreamVersions", err, CheckPage, id)
		verifyFinds(t, path, CheckPage, id)
		if fileHash(t, path) != before {
			t.Fatal("the damaged log was written")
		}
	})
}

func TestI27_HeadPastLastRecordIsLogCorrupt(t *testing.T) {
	path := buildLog(t, t.TempDir(), 100)
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketEvents).Delete(u64(102)) }))
	must(t, db.Close())
	_, err = OpenLog(path, Options{ReadOnly: true})
	var ce *LogCorruptError
	if !errors.As(err, &ce) || ce.Check != CheckHead || ce.Seq != 102 {
		t.Fatalf("err = %v", err)
	}
	v, err := VerifyLogFile(path)
	must(t, err)
	if v.Missing.String() != "102" || v.Records != 101 {
		t.Fatalf("missing %s, records %d", v.Missing, v.Records)
	}
}

func TestI27_MissingBucketIsLogCorrupt(t *testing.T) {
	path := buildLog(t, t.TempDir(), 10)
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketLease) }))
	must(t, db.Close())
	for _, ro := range []bool{false, true} {
		_, err = OpenLog(path, Options{ReadOnly: ro})
		wantCorrupt(t, "OpenLog", err, CheckBucket, 0)
	}
	verifyFinds(t, path, CheckBucket, 0)
}

func TestVerifyLogFileReportsEveryBadRecord(t *testing.T) {
	path := buildLog(t, t.TempDir(), 300)
	for _, seq := range []uint64{5, 9, 10, 11, 302} {
		corruptRecord(t, path, seq, func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b })
	}
	v, err := VerifyLogFile(path)
	must(t, err)
	if v.Corrupt.String() != "5, 9-11, 302" || v.Records != 297 || len(v.Problems) != 0 || len(v.Missing) != 0 {
		t.Fatalf("corrupt %q, records %d, problems %v, missing %s", v.Corrupt, v.Records, v.Problems, v.Missing)
	}
	var ce *CorruptRecordError
	if !errors.As(v.Err(), &ce) || ce.Seq != 5 {
		t.Fatalf("Err() = %v", v.Err())
	}
}

func TestVerifyLogFileHealthyAndLocked(t *testing.T) {
	path := buildLog(t, t.TempDir(), 300)
	v, err := VerifyLogFile(path)
	must(t, err)
	if !v.Healthy() || v.Records != 302 || v.Head != 302 || v.StaleMeta != "" || v.Err() != nil {
		t.Fatalf("%+v", v)
	}
	l, err := OpenLog(path, Options{})
	must(t, err)
	defer l.Close()
	if _, err := VerifyLogFile(path); !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("verify while a writer holds the file: %v", err)
	}
}

func TestVerifyLogFileReportsStaleMeta(t *testing.T) {
	path := buildLog(t, t.TempDir(), 100)
	pm := mapPages(t, path)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	must(t, err)
	var tx [2]uint64
	for i := range tx {
		var b [8]byte
		_, err := f.ReadAt(b[:], int64(i*pm.ps)+pageHeaderSize+48)
		must(t, err)
		tx[i] = binary.NativeEndian.Uint64(b[:])
	}
	newest := 0
	if tx[1] > tx[0] {
		newest = 1
	}
	_, err = f.WriteAt([]byte{0xff}, int64(newest*pm.ps)+pageHeaderSize+20) // inside the root pgid
	must(t, err)
	must(t, f.Close())
	v, err := VerifyLogFile(path)
	must(t, err)
	if v.StaleMeta == "" || v.TxID != tx[1-newest] {
		t.Fatalf("stale meta %q, txid %d (metas %v)", v.StaleMeta, v.TxID, tx)
	}
}
