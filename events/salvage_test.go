package events

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// destroyRecords flips a byte in the middle of every copy of the records
// of seqs in the file (the tree's and any older page's), as bit rot would.
func destroyRecords(t *testing.T, path string, seqs ...uint64) {
	t.Helper()
	recs := recordBytes(t, path)
	data, err := os.ReadFile(path)
	must(t, err)
	for _, seq := range seqs {
		r, n := recs[seq], 0
		for i := bytes.Index(data, r); i >= 0; {
			data[i+len(r)/2] ^= 0x40
			n++
			j := bytes.Index(data[i+1:], r)
			if j < 0 {
				break
			}
			i += 1 + j
		}
		if n == 0 {
			t.Fatalf("record %d not found in the file", seq)
		}
	}
	must(t, os.WriteFile(path, data, 0o600))
}

// storeIDOf reads the store id of a healthy log.
func storeIDOf(t *testing.T, path string) string {
	t.Helper()
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	return l.StoreID()
}

// salvageTo salvages src into a new dir and checks src was not written.
func salvageTo(t *testing.T, src string, opts SalvageOptions) (*SalvageReport, string, error) {
	t.Helper()
	before := fileHash(t, src)
	dst := filepath.Join(t.TempDir(), LogFileName)
	rep, err := SalvageLog(src, dst, opts)
	if fileHash(t, src) != before {
		t.Fatal("salvage wrote to the source")
	}
	return rep, dst, err
}

// sameRecords checks that every record of dst is byte-identical to the
// original's under the same seq, and that dst holds exactly want of them.
func sameRecords(t *testing.T, orig map[uint64][]byte, dst string, want int) {
	t.Helper()
	got := recordBytes(t, dst)
	if len(got) != want {
		t.Fatalf("%d records in the new log, want %d", len(got), want)
	}
	for seq, b := range got {
		if !bytes.Equal(orig[seq], b) {
			t.Fatalf("record %d differs from the original", seq)
		}
	}
}

func TestRepro9_SalvageCopiesEveryReadableRecordAndNamesTheLost(t *testing.T) {
	dir := t.TempDir()
	src := buildLog(t, dir, 900) // head 902: the last is lease.released
	orig, storeID := recordBytes(t, src), storeIDOf(t, src)
	destroyRecords(t, src, 811, 812, 813, 900, 902)
	rep, dst, err := salvageTo(t, src, SalvageOptions{})
	must(t, err)
	if rep.Lost.String() != "811-813, 900, 902" || rep.Recovered != 897 || rep.Head != 902 || rep.StoreID != storeID ||
		rep.NewStoreID || rep.HeadFrom != HeadFromTree || len(rep.Ambiguous) != 0 {
		t.Fatalf("report %+v lost %s", rep, rep.Lost)
	}
	sameRecords(t, orig, dst, 897)
	v, err := VerifyLogFile(dst)
	must(t, err)
	if !v.Healthy() || v.SalvageLost.String() != "811-813, 900, 902" || v.StoreID != storeID {
		t.Fatalf("new log: %+v %v", v, v.Err())
	}
	// The new store opens for writing; lost sequences, the last one
	// included, are never reused, and the epoch goes on.
	w, err := OpenWriter(filepath.Dir(dst), WriterOptions{Log: Options{Clock: NewManualClock(t0)}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1})
	must(t, err)
	all := readAll(t, w.Log(), 1)
	if len(all) != 898 || all[len(all)-1].Seq != 903 || w.Lease().Epoch != 2 || w.Log().StoreID() != storeID {
		t.Fatalf("%d events, last seq %d, epoch %d", len(all), all[len(all)-1].Seq, w.Lease().Epoch)
	}
	must(t, w.Close())
	// A salvage of the salvaged store keeps the record of what was lost.
	rep2, _, err := salvageTo(t, dst, SalvageOptions{})
	must(t, err)
	if rep2.Lost.String() != "811-813, 900, 902" || rep2.Recovered != 899 {
		t.Fatalf("second salvage: lost %s, recovered %d", rep2.Lost, rep2.Recovered)
	}
}

func TestRepro9_SalvageRecoversRecordsTheDamagedTreeNoLongerReaches(t *testing.T) {
	t.Run("branch page", func(t *testing.T) {
		src := buildLog(t, t.TempDir(), 800)
		orig := recordBytes(t, src)
		pm := mapPages(t, src)
		setCount(t, src, pm.ps, pm.branches["events"][0], 60000)
		rep, dst, err := salvageTo(t, src, SalvageOptions{})
		must(t, err)
		if len(rep.Lost) != 0 || rep.FromScan.String() != "1-802" || rep.Problems == 0 {
			t.Fatalf("lost %s, from scan %s, problems %d", rep.Lost, rep.FromScan, rep.Problems)
		}
		sameRecords(t, orig, dst, 802)
	})
	t.Run("leaf page", func(t *testing.T) {
		src := buildLog(t, t.TempDir(), 800)
		orig := recordBytes(t, src)
		pm := mapPages(t, src)
		setCount(t, src, pm.ps, pm.leaves["events"][3], 1) // hides all but one record of the page
		rep, dst, err := salvageTo(t, src, SalvageOptions{})
		must(t, err)
		if len(rep.Lost) != 0 || len(rep.FromScan) != 1 || rep.FromScan.Count() < 2 {
			t.Fatalf("lost %s, from scan %s", rep.Lost, rep.FromScan)
		}
		sameRecords(t, orig, dst, 802)
	})
}

func TestRepro9_SalvageTruncatedLog(t *testing.T) {
	src := buildLog(t, t.TempDir(), 4000)
	orig, storeID := recordBytes(t, src), storeIDOf(t, src)
	must(t, os.Truncate(src, 524288))
	if _, _, err := salvageTo(t, src, SalvageOptions{}); err != nil {
		wantCorrupt(t, "salvage without a head", err, CheckHead, 0) // unless an older root copy survived
	}
	rep, dst, err := salvageTo(t, src, SalvageOptions{Head: 4002, StoreID: storeID})
	must(t, err)
	if rep.HeadFrom == HeadFromTree || rep.Head != 4002 || rep.StoreID != storeID || rep.Recovered == 0 ||
		rep.Recovered+rep.Lost.Count() != 4002 || len(rep.Unconfirmed) != 0 {
		t.Fatalf("report %+v, lost %s", rep, rep.Lost)
	}
	sameRecords(t, orig, dst, int(rep.Recovered))
	// With a lower head, the records past it are unconfirmed: not copied,
	// and never reused.
	rep, dst, err = salvageTo(t, src, SalvageOptions{Head: 100})
	must(t, err)
	if rep.Recovered != 100 || len(rep.Unconfirmed) == 0 || rep.Head != rep.Unconfirmed[len(rep.Unconfirmed)-1].Last || !rep.NewStoreID && rep.StoreID != storeID {
		t.Fatalf("report %+v, unconfirmed %s", rep, rep.Unconfirmed)
	}
	v, err := VerifyLogFile(dst)
	must(t, err)
	if !v.Healthy() || !v.SalvageLost.ContainsAll(101, rep.Head) {
		t.Fatalf("new log %+v %v", v, v.Err())
	}
}

func TestRepro9_SalvageRefusesAnExistingTarget(t *testing.T) {
	src := buildLog(t, t.TempDir(), 10)
	dst := filepath.Join(t.TempDir(), LogFileName)
	must(t, os.WriteFile(dst, []byte("keep me"), 0o600))
	before := fileHash(t, src)
	if _, err := SalvageLog(src, dst, SalvageOptions{}); !errors.Is(err, ErrSalvageTarget) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(dst); string(b) != "keep me" || fileHash(t, src) != before {
		t.Fatal("a file was changed")
	}
}

func TestRepro9_SalvageNeverPicksBetweenTwoIntactCopies(t *testing.T) {
	src := buildLog(t, t.TempDir(), 300)
	// Rewrite seq 150 with other, intact content: the tree holds the new
	// copy, a freed page still holds the old one.
	l, err := OpenLog(src, Options{ReadOnly: true})
	must(t, err)
	all := readAll(t, l, 150)
	must(t, l.Close())
	e := all[0]
	e.Payload = SyncDiverged{Target: "x", Reason: "other content"}
	rec, err := MarshalRecord(e)
	must(t, err)
	db, err := bolt.Open(src, 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketEvents).Put(u64(150), rec) }))
	must(t, db.Close())
	pm := mapPages(t, src)
	setCount(t, src, pm.ps, leafOf(t, src, pm, 150), 60000) // the tree no longer reaches either
	rep, _, err := salvageTo(t, src, SalvageOptions{})
	must(t, err)
	if rep.Ambiguous.String() != "150" || rep.Lost.String() != "150" || rep.Recovered != 301 {
		t.Fatalf("ambiguous %s, lost %s, recovered %d", rep.Ambiguous, rep.Lost, rep.Recovered)
	}
}

// leafOf is the events leaf page holding seq.
func leafOf(t *testing.T, path string, pm pageMap, seq uint64) uint64 {
	t.Helper()
	f, err := os.Open(path)
	must(t, err)
	defer f.Close()
	bf, err := openBoltFile(f, fileSize(t, path))
	must(t, err)
	for _, id := range pm.leaves["events"] {
		p, err := bf.page(id, bf.meta.hwm)
		must(t, err)
		elems, err := p.elements()
		must(t, err)
		for _, e := range elems {
			if binary.BigEndian.Uint64(e.key) == seq {
				return id
			}
		}
	}
	t.Fatalf("no leaf holds %d", seq)
	return 0
}

func TestRepro9_SalvageRefusesAStoreInUse(t *testing.T) {
	src := buildLog(t, t.TempDir(), 10)
	l, err := OpenLog(src, Options{})
	must(t, err)
	defer l.Close()
	if _, err := SalvageLog(src, filepath.Join(t.TempDir(), LogFileName), SalvageOptions{}); !errors.Is(err, ErrStoreLocked) {
		t.Fatalf("err = %v", err)
	}
}

// When the newest commit's root page is damaged, the previous commit's
// tree gives the head; the newest commit's records are unconfirmed: not
// copied, and their sequences never reused.
func TestRepro9_SalvageFallsBackToThePreviousCommit(t *testing.T) {
	src := buildLog(t, t.TempDir(), 100) // the last commit appended lease.released, seq 102
	orig := recordBytes(t, src)
	f, err := os.Open(src)
	must(t, err)
	bf, err := openBoltFile(f, fileSize(t, src))
	must(t, err)
	root, ps := bf.meta.root, bf.ps
	must(t, f.Close())
	setCount(t, src, ps, root, 60000)
	rep, dst, err := salvageTo(t, src, SalvageOptions{})
	must(t, err)
	if rep.HeadFrom != HeadFromOlder || rep.Head != 102 || rep.Unconfirmed.String() != "102" || rep.Lost.String() != "102" || rep.Recovered != 101 {
		t.Fatalf("report %+v: unconfirmed %s, lost %s", rep, rep.Unconfirmed, rep.Lost)
	}
	sameRecords(t, orig, dst, 101)
}
