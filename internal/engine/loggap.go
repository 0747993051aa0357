package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// findLogGap runs after log.db is open and before the writer lease is
// taken, i.e. before anything is appended. A read model of this store
// whose checkpoint is past the log head means the log lost records it had
// acknowledged (a damaged meta page, an older log.db restored). Unless
// the configuration accepts the gap, the open fails with *LogGapError and
// nothing is written: an append would reuse the file pages that may still
// hold the lost records, which `hikoutei salvage --head` can recover.
// Accepted, the read model is set aside (kept: the only other trace of
// what was lost) so the open rebuilds one from the log, and the gap is
// recorded in the log once the lease is held (recordLogGap) and reported
// by Health. An unreadable read model is left to openProjector.
func (e *Engine) findLogGap(l *events.Log) error {
	head, err := l.Head()
	if err != nil {
		return err
	}
	cp, storeID, err := projector.ReadCheckpoint(e.ReadModelPath())
	if err != nil || storeID != l.StoreID() {
		return nil
	}
	if cp <= head {
		return e.keepEpochs(l)
	}
	if !e.cfg.AcceptLogGap {
		return &LogGapError{Gap: events.LogGapDetected{ReadModelCheckpoint: cp, LogHead: head}, Dir: e.dir}
	}
	// The epochs of the lost run are never reused either: the spreadsheet
	// authority names it, and the records everybody saw carry it.
	if err := e.keepEpochs(l); err != nil {
		return err
	}
	aside, err := setAside(e.ReadModelPath(), disk.KindAheadOfLog)
	if err != nil {
		return err
	}
	// The lost sequences were handed out (the read model, subscriptions,
	// the mirror, pins saw them): they are never reused. Numbering goes on
	// after the highest one ever recorded.
	if err := l.MarkLost(max(cp, e.snapshotHighWater(l.StoreID()))); err != nil {
		return fmt.Errorf("record the lost sequences: %w", err)
	}
	e.gap = &events.LogGapDetected{ReadModelCheckpoint: cp, LogHead: head, SetAside: aside[len(e.dir)+1:]}
	e.log.Error("the log is behind its read model: acknowledged records were lost from log.db; the read model was set aside and is rebuilt from the log; "+
		"the lost sequences are never reused",
		"log_head", head, "read_model_checkpoint", cp, "set_aside", e.gap.SetAside)
	return nil
}

// keepEpochs raises the log's epoch floor (events.Log.RaiseEpochFloor)
// to the highest writer epoch the read model of this store saw, when the
// log's lease names a lower one: the log lost the run that took it (an
// older log.db restored), and the lease this open takes must be above it,
// never the lost run's epoch again (the spreadsheet authority, the mirror,
// subscribers saw it). A read model it cannot read is left to
// openProjector.
func (e *Engine) keepEpochs(l *events.Log) error {
	hw, err := projector.ReadEpochHighWater(e.ReadModelPath())
	if err != nil || hw == 0 {
		return nil
	}
	raised, err := l.RaiseEpochFloor(events.DefaultRole, hw)
	if err != nil {
		return fmt.Errorf("record the epochs handed out: %w", err)
	}
	if raised {
		e.log.Warn("the read model saw a writer epoch the log does not hold (an older log.db?): the writer lease is taken above it, never reusing an epoch",
			"epoch_high_water", hw)
	}
	return nil
}

// snapshotHighWater is the highest sequence a snapshot of this store
// covers (0: none): a sequence handed out, like the read model's
// checkpoint.
func (e *Engine) snapshotHighWater(storeID string) uint64 {
	d := snapshots.Existing(e.dir, e.log)
	seqs, err := d.List()
	if err != nil {
		return 0
	}
	var hw uint64
	for _, seq := range seqs {
		if _, err := d.Verify(seq, storeID); err == nil {
			hw = max(hw, seq)
		}
	}
	return hw
}

// recordHoles appends integrity.holes_recorded naming the log's holes
// (a salvage's, an accepted gap's lost sequences) that no earlier such
// record names (writer lease held, before the read model is opened): a
// head pinned from that record on may vouch across them, and verification
// refuses one pinned before it.
func (e *Engine) recordHoles() error {
	holes, err := e.writer().Log().UnrecordedHoles()
	if err != nil || len(holes) == 0 {
		return err
	}
	res, err := e.writer().Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.IntegrityStream, ExpectedVersion: events.AnyVersion,
		Events: []events.Event{{Payload: events.HolesRecorded{Lost: holes.String()}}}}}})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return fmt.Errorf("record the log's holes: %w", err)
	}
	e.log.Warn("the log has holes (sequences it lost and never reuses); recorded them: a head pinned from now on vouches across them",
		"lost", holes.String(), "seq", res[0].First)
	return nil
}

// recordLogGap appends the gap findLogGap found (writer lease held, before
// the read model is opened).
func (e *Engine) recordLogGap() error {
	if e.gap == nil {
		return nil
	}
	res, err := e.writer().Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.IntegrityStream, ExpectedVersion: events.AnyVersion,
		Events: []events.Event{{Payload: *e.gap}}}}})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return fmt.Errorf("record the log gap: %w", err)
	}
	return nil
}

// LogGapError is the log gap found at open: Open's error when the gap is
// not accepted (SetAside empty, Dir set), Health's when it was.
type LogGapError struct {
	Gap events.LogGapDetected
	Dir string // the store directory (refused opens)
}

func (e *LogGapError) Error() string {
	lost := fmt.Sprintf("%s: log.db lost records %d-%d it had acknowledged", ErrLogBehindReadModel, e.Gap.LogHead+1, e.Gap.ReadModelCheckpoint)
	if e.Gap.SetAside != "" {
		return lost + "; the read model that had them was kept as " + e.Gap.SetAside
	}
	return fmt.Sprintf("%s (its read model has them applied); nothing was changed. To recover them, run "+
		"`hikoutei salvage --from %s --to NEW_DIR --head %d` and use NEW_DIR; to accept their loss, open with AcceptLogGap "+
		"(`hikoutei serve --accept-log-gap`)", lost, e.Dir, e.Gap.ReadModelCheckpoint)
}

// Unwrap returns ErrLogBehindReadModel.
func (e *LogGapError) Unwrap() error { return ErrLogBehindReadModel }
