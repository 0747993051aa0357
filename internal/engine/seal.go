package engine

import (
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// Seal moves the log's records with seq < below into a sealed segment
// (events.Log.Seal) on the writer goroutine, between group commits, and
// projects the segment.sealed event. It never seals what the read model
// has not applied: below is lowered to the read model's checkpoint + 1, so
// that opening the store never replays a sealed record. A replicated
// primary's seal is one more commit of the stream, which its standbys
// apply by sealing the same records; then the stream drops what every
// host sealed (purgeSealed; its failure does not fail the seal). Errors:
// events.ErrSealRefused (a standby, nothing to seal);
// the errors of events.Log.Seal; ErrStoreClosed; ErrReadModelBehind when
// the seal committed but the read model did not apply it (sealedBehind).
func (e *Engine) Seal(below uint64) (events.SealReport, error) {
	var rep events.SealReport
	err := e.onWriter(func() error {
		if e.writer() == nil {
			return fmt.Errorf("%w: a standby does not seal (its primary's log does)", events.ErrSealRefused)
		}
		if err := e.refusing(); err != nil {
			return err
		}
		if err := e.repairReadModel(); err != nil {
			return err
		}
		if err := e.writer().RenewIfDue(); err != nil {
			return err
		}
		var err error
		rep, err = e.writer().Log().Seal(e.writer().Fence(), min(below, e.proj.Checkpoint()+1))
		if err != nil {
			return err
		}
		err = e.projected(e.applySealed(rep.Event))
		e.afterCommit(false)
		if err != nil {
			return sealedBehind(rep, err)
		}
		return nil
	})
	if err == nil || errors.Is(err, ErrReadModelBehind) { // the seal committed
		e.purgeSealed()
	}
	return rep, err
}

// applySealed applies a committed seal's segment.sealed event to the
// read model; the failpoint readmodel.before_commit fails its SQLite
// commit, as after a group commit.
func (e *Engine) applySealed(ev events.Event) error {
	return e.proj.ApplyKnownThen([]events.Event{ev}, nil, func() error {
		return failpoint.Err(failpoint.ReadModelBeforeCommit)
	})
}

// sealedBehind says of a seal whose log commit stands, but whose
// segment.sealed the read model did not apply (err, from projected:
// ErrReadModelBehind and the cause, a full disk most often), what
// happened and what to do: the seal is done and nothing is lost.
func sealedBehind(rep events.SealReport, err error) error {
	cause := err
	if j, ok := err.(interface{ Unwrap() []error }); ok && len(j.Unwrap()) == 2 {
		cause = j.Unwrap()[1] // projected's: ErrReadModelBehind, then the cause
	}
	g := rep.Segment
	return fmt.Errorf("%w: the seal is committed (segment %s holds seqs %d..%d, vouched for at seq %d), "+
		"but read.sqlite could not record it (%w); nothing is lost and nothing needs redoing: free disk space "+
		"if the disk is full, and the store catches its read model up before its next commit and at its next open",
		ErrReadModelBehind, g.Name, g.First, g.Last, rep.Event.Seq, cause)
}
