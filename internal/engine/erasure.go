package engine

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// RecordErasure commits one subject.erased event (stream "erasures") as a
// fenced unit and projects it, returning its log sequence. The caller
// destroys the subject's key once it returns nil (docs/erasure.md).
// Errors: fencing and store errors, as Commit's.
func (e *Engine) RecordErasure(p events.SubjectErased) (uint64, error) {
	var seq uint64
	err := e.onWriter(func() error {
		v, err := e.Log().StreamVersion(events.ErasureStream)
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		ch.Add(events.ErasureStream, v, events.New(events.ErasureStream, p, now))
		if err := e.commitWorker(ch, now); err != nil {
			return err
		}
		seq, err = e.Log().Head() // the writer goroutine: nothing committed since
		return err
	})
	return seq, err
}
