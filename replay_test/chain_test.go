package replaytest

import (
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// The committed airports log (the demo's airports, written by a build
// before the chain: record formats 1 and 2, log format 2) verifies as it
// is; a write open upgrades it, the first record appended links to the
// chain over every older record, the old head stays pinned, and a change
// to an older record (seq 20) is then found at that first chained record. Its
// replay is unchanged by the upgrade up to the old head.
func TestI33_TheCommittedAirportsLogVerifiesAndGainsTheChainOnUpgrade(t *testing.T) {
	dir := copyStore(t, "airports")
	before, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{})
	must(t, err)
	if before.FirstChained != 0 || before.Records != logHead(t, dir) {
		t.Fatalf("the pre-chain log: %+v", before)
	}
	pin := hikoutei.ChainPin{Seq: before.Head, Hash: before.HeadHash}
	w, err := events.OpenWriter(dir, events.WriterOptions{AcquireWait: -1, HeartbeatInterval: -1, Operation: "test"})
	must(t, err)
	must(t, w.Close())
	after, err := hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{Pin: &pin})
	must(t, err)
	if after.FirstChained != before.Head+1 || !after.Pinned {
		t.Fatalf("after the upgrade: %+v (old head %d)", after, before.Head)
	}
	_, cp := replayed(t, dir)
	if cp != after.Head {
		t.Fatalf("the upgraded log replays to %d, its head is %d", cp, after.Head)
	}
	db, err := bolt.Open(filepath.Join(dir, events.LogFileName), 0o600, nil)
	must(t, err)
	must(t, db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("events"))
		rec := append([]byte(nil), b.Get(seqKey(20))...)
		rec[len(rec)-9] ^= 1 // the last byte of its payload
		body := rec[:len(rec)-8]
		binary.LittleEndian.PutUint64(rec[len(body):], xxhash.Sum64(body))
		return b.Put(seqKey(20), rec)
	}))
	must(t, db.Close())
	_, err = hikoutei.VerifyDir(t.Context(), dir, hikoutei.VerifyOptions{})
	var be *events.ChainBrokenError
	if !errors.As(err, &be) || be.Seq != before.Head+1 {
		t.Fatalf("an older record changed: %v, want the break at the first chained record %d", err, before.Head+1)
	}
}
