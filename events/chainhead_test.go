package events

import (
	"errors"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// A log whose last record is torn has no head to pin: ChainHead fails
// naming that record instead of pairing its sequence with the chain value
// of the record before it (a pin that could never verify).
func TestI33_ChainHeadOfALogWithATornLastRecordIsAnError(t *testing.T) {
	path := buildLog(t, t.TempDir(), 50)
	var head uint64
	editLog(t, path, func(ev, meta *bolt.Bucket) {
		head = getU64(meta, metaHead)
		rec := append([]byte(nil), ev.Get(u64(head))...)
		rec[len(rec)/2] ^= 0x01
		must(t, ev.Put(u64(head), rec))
	})
	l, err := OpenLog(path, Options{ReadOnly: true})
	must(t, err)
	defer l.Close()
	p, err := l.ChainHead()
	var ce *CorruptRecordError
	if !errors.As(err, &ce) || ce.Seq != head {
		t.Fatalf("ChainHead of a log whose last record %d is torn: %v, %v; want a corrupt record error naming it", head, p, err)
	}
}
