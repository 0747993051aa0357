package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// findLogGap runs after log.db is open and before the writer lease is
// taken, i.e. before anything is appended. A read model of this store
// whose checkpoint is past the log head means the log lost records it had
// acknowledged (a damaged meta page, an older log.db restored): the read
// model is set aside (kept: it is the only trace of what was lost) so the
// open rebuilds one from the log, and the gap is remembered, to be
// recorded in the log once the lease is held (recordLogGap) and reported
// by Health. An unreadable read model is left to openProjector.
func (e *Engine) findLogGap(l *events.Log) error {
	head, err := l.Head()
	if err != nil {
		return err
	}
	cp, storeID, err := projector.ReadCheckpoint(e.ReadModelPath())
	if err != nil || storeID != l.StoreID() || cp <= head {
		return nil
	}
	aside, err := setAside(e.ReadModelPath(), "ahead-of-log")
	if err != nil {
		return err
	}
	e.gap = &events.LogGapDetected{ReadModelCheckpoint: cp, LogHead: head, SetAside: aside[len(e.dir)+1:]}
	e.log.Error("the log is behind its read model: acknowledged records were lost from log.db; the read model was set aside and is rebuilt from the log",
		"log_head", head, "read_model_checkpoint", cp, "set_aside", e.gap.SetAside)
	return nil
}

// recordLogGap appends the gap findLogGap found (writer lease held, before
// the read model is opened).
func (e *Engine) recordLogGap() error {
	if e.gap == nil {
		return nil
	}
	res, err := e.w.Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.IntegrityStream, ExpectedVersion: events.AnyVersion,
		Events: []events.Event{{Payload: *e.gap}}}}})
	if err == nil {
		err = res[0].Err
	}
	if err != nil {
		return fmt.Errorf("record the log gap: %w", err)
	}
	return nil
}

// LogGapError reports, in Health, the log gap found at open.
type LogGapError struct{ Gap events.LogGapDetected }

func (e *LogGapError) Error() string {
	return fmt.Sprintf("%s: log.db lost records %d-%d it had acknowledged; the read model that had them was kept as %s",
		ErrLogBehindReadModel, e.Gap.LogHead+1, e.Gap.ReadModelCheckpoint, e.Gap.SetAside)
}

// Unwrap returns ErrLogBehindReadModel.
func (e *LogGapError) Unwrap() error { return ErrLogBehindReadModel }
