package events

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestAppendAssignsDenseSequencesAndStreamVersions(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	leaseEvents := readAll(t, l, 1)
	res, err := l.Append(f, unit("entity/Airport/GKA", 0, 2),
		unit("entity/Airport/MAG", 0, 1))
	must(t, err)
	base := uint64(len(leaseEvents))
	if res[0].First != base+1 || res[0].Last != base+2 || res[1].First != base+3 || res[0].Err != nil {
		t.Fatalf("results %+v", res)
	}
	if res[0].Commit == res[1].Commit {
		t.Fatal("two units share a commit id")
	}
	all := readAll(t, l, 1)
	for i, e := range all {
		if e.Seq != uint64(i+1) {
			t.Fatalf("seq %d at position %d: not dense", e.Seq, i)
		}
	}
	last := all[len(all)-1]
	if last.Stream != "entity/Airport/MAG" || last.Version != 1 || last.Epoch != f.Epoch || last.Token != f.Token || last.Payload != note(0) {
		t.Fatalf("last event %+v", last)
	}
	if head, _ := l.Head(); head != base+3 {
		t.Fatalf("head %d", head)
	}
}

func TestAppendVersionConflictIsTypedAndIsolatedToItsUnit(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	_, err := l.Append(f, unit("s/a", 0, 1))
	must(t, err)
	res, err := l.Append(f, unit("s/a", 0, 1), unit("s/b", 0, 1))
	must(t, err)
	var vc *VersionConflictError
	if !errors.As(res[0].Err, &vc) || vc.Stream != "s/a" || vc.Expected != 0 || vc.Actual != 1 {
		t.Fatalf("unit 0 err = %v", res[0].Err)
	}
	if !errors.Is(res[0].Err, ErrVersionConflict) || res[1].Err != nil || res[1].First == 0 {
		t.Fatalf("results %+v", res)
	}
	if v, _ := l.StreamVersion("s/a"); v != 1 {
		t.Fatalf("s/a version %d after a rejected unit", v)
	}
}

func TestAppendInvalidPayloadCommitsNothingOfThatUnit(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	bad := Unit{Streams: []StreamAppend{
		{Stream: "s/ok", ExpectedVersion: AnyVersion, Events: []Event{{Payload: note(0)}}},
		{Stream: "s/nan", ExpectedVersion: AnyVersion, Events: []Event{{Payload: EntityPersisted{Entity: "A", ID: "1",
			Fields: map[string]any{"v": nanValue()}}}}},
	}}
	res, err := l.Append(f, bad)
	must(t, err)
	if !errors.Is(res[0].Err, ErrInvalidEvent) || !errors.Is(res[0].Err, ErrNonFinite) {
		t.Fatalf("err = %v", res[0].Err)
	}
	if v, _ := l.StreamVersion("s/ok"); v != 0 {
		t.Fatal("part of an invalid unit was committed")
	}
}

func nanValue() float64 {
	zero := 0.0
	return zero / zero
}

func TestReadStreamFromVersion(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	for i := range 5 {
		_, err := l.Append(f, unit("s/a", uint64(i), 1), unit("s/ab", AnyVersion, 1))
		must(t, err)
	}
	var got []uint64
	must(t, l.ReadStream("s/a", 3, func(e Event) error { got = append(got, e.Version); return nil }))
	if fmt.Sprint(got) != "[3 4 5]" {
		t.Fatalf("versions %v", got)
	}
}

func TestReadFromSpansChunks(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	for range 3 {
		u := unit("s/a", AnyVersion, 400)
		_, err := l.Append(f, u)
		must(t, err)
	}
	head, _ := l.Head()
	if got := readAll(t, l, 2); uint64(len(got)) != head-1 || got[0].Seq != 2 {
		t.Fatalf("read %d events from 2, head %d", len(got), head)
	}
}

// corruptRecord rewrites the stored bytes of seq with fn.
func corruptRecord(t *testing.T, path string, seq uint64, fn func([]byte) []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	must(t, err)
	defer db.Close()
	must(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEvents)
		v := append([]byte(nil), b.Get(u64(seq))...)
		return b.Put(u64(seq), fn(v))
	}))
}

func TestCorruptRecordIsTypedErrorNamingSequence(t *testing.T) {
	for name, fn := range map[string]func([]byte) []byte{
		"bitflip": func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		"torn":    func(b []byte) []byte { return b[:len(b)/2] },
		"empty":   func(b []byte) []byte { return b[:0] },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, LogFileName)
			l, err := OpenLog(path, Options{Clock: NewManualClock(t0)})
			must(t, err)
			f := acquire(t, l, "w1").Fence()
			_, err = l.Append(f, unit("s/a", 0, 3))
			must(t, err)
			head, _ := l.Head()
			l.Close()
			corruptRecord(t, path, head-1, fn)
			l, err = OpenLog(path, Options{Clock: NewManualClock(t0)})
			must(t, err)
			defer l.Close()
			err = l.ReadFrom(1, func(Event) error { return nil })
			var ce *CorruptRecordError
			if !errors.As(err, &ce) || ce.Seq != head-1 || !errors.Is(err, ErrCorruptRecord) {
				t.Fatalf("ReadFrom err = %v", err)
			}
			if _, err := l.VerifyChecksums(); !errors.As(err, &ce) || ce.Seq != head-1 {
				t.Fatalf("VerifyChecksums err = %v", err)
			}
		})
	}
}

func TestUpcasterRewritesOldSchemaOnRead(t *testing.T) {
	l, _ := openTestLog(t)
	f := acquire(t, l, "w1").Fence()
	old := Unit{Streams: []StreamAppend{{Stream: "entity/A/1", ExpectedVersion: 0, Events: []Event{{Payload: Recorded{
		Type: TypeEntityPersisted, Schema: 1, Fields: map[string]any{"entity": "A", "id": "1",
			"values": map[string]any{"name": "Goroka"}, "revisions": map[string]any{"name": int64(1)}}}}}}}}
	_, err := l.Append(f, old)
	must(t, err)
	var got Event
	must(t, l.ReadStream("entity/A/1", 1, func(e Event) error { got = e; return nil }))
	p, ok := got.Payload.(EntityPersisted)
	if !ok || !p.Created || p.Fields["name"] != "Goroka" || p.Revisions["name"] != 1 {
		t.Fatalf("upcast event %+v", got)
	}
}

func TestLogFileIsCreated0600(t *testing.T) {
	l, _ := openTestLog(t)
	st, err := os.Stat(l.Path())
	must(t, err)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("log.db mode %v", st.Mode().Perm())
	}
}
