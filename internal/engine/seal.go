package engine

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
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
// the errors of events.Log.Seal; ErrStoreClosed.
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
		err = e.projected(e.proj.Apply([]events.Event{rep.Event}))
		e.afterCommit(false)
		return err
	})
	if err == nil {
		e.purgeSealed()
	}
	return rep, err
}
