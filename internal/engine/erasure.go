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

// Remask rewrites, on the writer goroutine, the read-model rows of
// entity's records ids through the registry's mask (WithMask) and
// truncates the WAL: Store.Erase masks this way an erased subject's
// personal values written in clear, before it queues the rewrite of their
// cells from canonical state. It returns how many rows changed.
// Errors: store errors.
func (e *Engine) Remask(entity string, ids []string) (int, error) {
	n := 0
	err := e.onWriter(func() error {
		var busy bool
		var err error
		n, busy, err = e.proj.Remask(entity, ids)
		if busy {
			e.log.Warn("a reader kept the read model's WAL from being truncated after an erasure; it is truncated once no reader holds an older snapshot")
		}
		return err
	})
	return n, err
}
