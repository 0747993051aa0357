package events

import (
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Holes returns the sequences the log no longer holds and never reuses
// (meta salvage_lost: a salvage's holes, an accepted log gap's lost
// sequences). Errors: ErrLogClosed; *LogCorruptError for a value that does
// not parse.
func (l *Log) Holes() (SeqRanges, error) {
	var lost SeqRanges
	err := l.view(func(tx *bolt.Tx) error {
		var err error
		lost, err = salvageLost(tx.Bucket(bucketMeta))
		return err
	})
	return lost, err
}

// UnrecordedHoles returns the holes (Holes) that no
// integrity.holes_recorded event of the log names yet: a store records
// them once it holds the lease (HolesRecorded), so that pins taken after
// that record may vouch across them. Errors: as Holes; the log's read
// errors.
func (l *Log) UnrecordedHoles() (SeqRanges, error) {
	lost, err := l.Holes()
	if err != nil || len(lost) == 0 {
		return nil, err
	}
	err = l.ReadStream(IntegrityStream, 1, func(ev Event) error {
		if p, ok := ev.Payload.(HolesRecorded); ok {
			if named, perr := parseSeqRanges(p.Lost); perr == nil {
				lost = lost.Minus(named)
			}
		}
		return nil
	})
	return lost, err
}

// MarkLost raises the log's head to through, recording head+1..through as
// lost (meta salvage_lost) so they are never reused: sequences an earlier
// history of this log handed out (a read model, a subscriber, a mirror or
// a pin saw them) that the log no longer holds, e.g. after an accepted log
// gap. The next append is through+1. Nothing happens when through is not
// above the head. Call it before anything is appended in this run (before
// the writer lease is taken: the caller holds the file lock). Errors:
// ErrLogClosed; the log's damage; *LogCorruptError for a salvage_lost
// value that does not parse.
func (l *Log) MarkLost(through uint64) error {
	return l.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		head := getU64(meta, metaHead)
		if through <= head {
			return nil
		}
		lost, err := salvageLost(meta)
		if err != nil {
			return err
		}
		lost.AddRange(head+1, through)
		if err := meta.Put(metaSalvageLost, []byte(lost.String())); err != nil {
			return fmt.Errorf("record lost sequences: %w", err)
		}
		return meta.Put(metaHead, u64(through))
	})
}

// metaEpochFloor is the meta key recording the highest writer epoch an
// earlier history of this log handed out that its lease record may no
// longer name (RaiseEpochFloor).
var metaEpochFloor = []byte("epoch_floor")

// RaiseEpochFloor records that writer epochs up to epoch were handed out,
// so every later lease is taken above it: the epochs of a run whose
// records the log lost (an older log.db restored, an accepted log gap) are
// never reused, as its lost sequences are not (MarkLost); the spreadsheet
// authority and the records the read model, subscribers and the mirror
// saw carry them. It reports whether the floor rose. Nothing happens when
// epoch is not above the floor and the role's lease epoch. Errors:
// ErrLogClosed; the log's damage.
func (l *Log) RaiseEpochFloor(role string, epoch uint64) (bool, error) {
	if role == "" {
		role = DefaultRole
	}
	raised := false
	err := l.update(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		cur, _, err := getLease(tx, role)
		if err != nil {
			return err
		}
		if epoch <= getU64(meta, metaEpochFloor) || epoch <= cur.Epoch {
			return nil
		}
		raised = true
		return meta.Put(metaEpochFloor, u64(epoch))
	})
	return raised, err
}

// EpochFloor returns the highest writer epoch RaiseEpochFloor recorded
// (0: none). Errors: ErrLogClosed.
func (l *Log) EpochFloor() (uint64, error) {
	var floor uint64
	err := l.view(func(tx *bolt.Tx) error {
		floor = getU64(tx.Bucket(bucketMeta), metaEpochFloor)
		return nil
	})
	return floor, err
}
