package doctor

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/events"
)

// editLog runs fn on the events and meta buckets of the closed store in
// dir, as someone editing log.db with bbolt would.
func editLog(t *testing.T, dir string, fn func(ev, meta *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return fn(tx.Bucket([]byte("events")), tx.Bucket([]byte("meta"))) }); err != nil {
		t.Fatal(err)
	}
}

func key(seq uint64) []byte { return binary.BigEndian.AppendUint64(nil, seq) }

// finding returns the first finding of check with code, or fails.
func finding(t *testing.T, r Report, check, code string) Finding {
	t.Helper()
	for _, f := range r.Findings {
		if f.Check == check && f.Code == code {
			return f
		}
	}
	t.Fatalf("no %s finding with code %q: %+v", check, code, r.Findings)
	return Finding{}
}

// Record 1 edited with its checksum recomputed passes every checksum;
// the hash chain finds it: doctor fails with chain_broken naming seq 1,
// as audit verify does, and reports damage.
func TestI33_DoctorFindsAnEditedRecordWithItsChecksumRecomputed(t *testing.T) {
	dir := store(t)
	editLog(t, dir, func(ev, _ *bolt.Bucket) error {
		e, err := events.DecodeRecord(1, ev.Get(key(1)))
		if err != nil {
			return err
		}
		e.At = e.At.Add(1)
		rec, err := events.MarshalRecord(e)
		if err != nil {
			return err
		}
		return ev.Put(key(1), rec)
	})
	r := Check(dir)
	f := finding(t, r, chainCheck, events.ErrChainBroken.Error())
	if f.Severity != Fail || !strings.Contains(f.Detail, "chain_broken: seq 1:") || !r.Damaged() {
		t.Fatalf("finding %+v, damaged %v", f, r.Damaged())
	}
	finding(t, r, "log.db", "") // the checksums themselves hold
}

// A salvage hole is a chain_restarted warning, as the salvage is: the
// store stays healthy, and the finding names the hole and the restart.
func TestI33_DoctorWarnsOfASalvageHoleInTheChain(t *testing.T) {
	dir := store(t)
	editLog(t, dir, func(ev, meta *bolt.Bucket) error {
		if err := ev.Delete(key(5)); err != nil {
			return err
		}
		return meta.Put([]byte("salvage_lost"), []byte("5"))
	})
	r := Check(dir)
	f := finding(t, r, chainCheck, events.ErrChainRestarted.Error())
	if f.Severity != Warn || !strings.Contains(f.Detail, "seq 5 lost to a salvage; the chain restarts at seq 6") || !r.Healthy() {
		t.Fatalf("finding %+v, healthy %v: %+v", f, r.Healthy(), r.Findings)
	}
}

func TestI33_DoctorReportsAnIntactChainWithItsHead(t *testing.T) {
	r := Check(store(t))
	f := finding(t, r, chainCheck, "")
	if f.Severity != OK || !strings.Contains(f.Detail, "records linked from the store's genesis value to the head") {
		t.Fatalf("finding %+v", f)
	}
}

// Doctor walks the whole chain whatever the log's chain checkpoint says:
// a record edited below the checkpoint (which a store's open no longer
// reads) fails as chain_broken naming its sequence.
func TestI33_DoctorFindsAnEditBelowTheChainCheckpoint(t *testing.T) {
	dir := store(t)
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := l.VerifyChain(t.Context(), events.ChainVerifyOptions{FromCheckpoint: true})
	if err == nil {
		_, err = l.RecordChainCheckpoint(rep)
	}
	if err := errors.Join(err, l.Close()); err != nil {
		t.Fatal(err)
	}
	editLog(t, dir, func(ev, _ *bolt.Bucket) error {
		e, err := events.DecodeRecord(5, ev.Get(key(5)))
		if err != nil {
			return err
		}
		e.At = e.At.Add(1)
		rec, err := events.MarshalRecord(e)
		if err != nil {
			return err
		}
		return ev.Put(key(5), rec)
	})
	f := finding(t, Check(dir), chainCheck, events.ErrChainBroken.Error())
	if !strings.Contains(f.Detail, "seq 5") {
		t.Fatalf("doctor's finding: %s", f.Detail)
	}
}
