package snapshots

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
)

// Vouchers are the snapshot.taken events of a log: for each snapshot
// sequence, the digests the log vouches for and the sequence of the event
// that recorded each.
type Vouchers struct {
	storeID string
	by      map[uint64]map[string]uint64 // snapshot seq → digest → event seq
}

// ReadVouchers reads the snapshot.taken events of l with a sequence at
// most head. Errors: the log's read errors.
func ReadVouchers(l *events.Log, head uint64) (Vouchers, error) {
	v := Vouchers{storeID: l.StoreID(), by: map[uint64]map[string]uint64{}}
	err := l.ReadStream(events.SnapshotStream, 1, func(e events.Event) error {
		p, ok := e.Payload.(events.SnapshotTaken)
		if !ok || e.Seq > head || p.StoreID != v.storeID || p.Seq >= e.Seq {
			return nil
		}
		if v.by[p.Seq] == nil {
			v.by[p.Seq] = map[string]uint64{}
		}
		v.by[p.Seq][p.Digest] = e.Seq
		return nil
	})
	return v, err
}

// Check reports whether an event vouches for m: same store, same snapshot
// sequence, same file digest. Errors: ErrSnapshotUnvouched.
func (v Vouchers) Check(m Manifest) error {
	_, err := v.EventSeq(m)
	return err
}

// EventSeq returns the sequence of the snapshot.taken event that vouches
// for m. Errors: ErrSnapshotUnvouched.
func (v Vouchers) EventSeq(m Manifest) (uint64, error) {
	if seq, ok := v.by[m.Seq][m.Hash]; ok && m.StoreID == v.storeID {
		return seq, nil
	}
	return 0, fmt.Errorf("%w: %d: no %s event in the log has digest %s", ErrSnapshotUnvouched, m.Seq, events.TypeSnapshotTaken, m.Hash)
}
