package engine

import (
	"context"
	"sync/atomic"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// replSealState is what a replicated store knows of its stream's
// retention: the first commit the stream held when last looked at, and
// the last purge's failure.
type replSealState struct {
	streamFirst atomic.Uint64
	purgeErr    atomic.Pointer[error]
}

// purgeSealed drops from the stream the commits whose records every host
// has sealed, one seal behind: it keeps the commit holding the newest
// segment's first record and every later one, so a standby that has not
// applied the newest seal yet still finds its records in the stream
// (docs/replication.md, "Retention"). A primary calls it after each seal
// and when it becomes the primary (so a purge a crash skipped is redone;
// purging what is gone already does nothing). Its outcome goes to
// Health().Replication (Purge) and the log; it never fails a seal.
func (e *Engine) purgeSealed() {
	r := e.repl
	if r == nil || e.writer() == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	err := e.purgeStream(ctx)
	switch {
	case err == nil:
		r.sealing.purgeErr.Store(nil)
		return
	case replication.IsPurgeDenied(err):
		e.log.Warn("replication: the stream keeps every commit (it denies purges)", "store", r.store)
	default:
		e.log.Warn("replication: purging the sealed commits from the stream failed; the next seal or open retries",
			"store", r.store, "err", err.Error())
	}
	r.sealing.purgeErr.Store(&err)
}

// purgeStream purges the stream below the commit holding the first
// record of the newest segment (nothing while the log has fewer than
// two segments).
func (e *Engine) purgeStream(ctx context.Context) error {
	r := e.repl
	segs, err := e.Log().Segments()
	if err != nil || len(segs) < 2 {
		return err
	}
	keep, ok, err := r.stream.CommitOf(ctx, segs[len(segs)-1].First)
	if err != nil || !ok {
		return err
	}
	first, err := r.stream.First(ctx)
	if err != nil {
		return err
	}
	r.sealing.streamFirst.Store(first)
	if first >= keep {
		return nil
	}
	if err := failpoint.Err(failpoint.ReplicationBeforePurge); err != nil {
		return err
	}
	if err := r.stream.Purge(ctx, keep); err != nil {
		return err
	}
	r.sealing.streamFirst.Store(keep)
	e.log.Info("replication: the stream dropped the sealed commits", "store", r.store, "first", keep,
		"sealed_through", segs[len(segs)-2].Last)
	return nil
}

// noteStreamFirst records the stream's first commit (a standby, as it
// starts following).
func (e *Engine) noteStreamFirst(ctx context.Context) {
	if first, err := e.repl.stream.First(ctx); err == nil {
		e.repl.sealing.streamFirst.Store(first)
	}
}

// sealHealth fills h's retention part: this host's sealed-through, the
// stream's first commit, the last purge's failure.
func (e *Engine) sealHealth(h *ReplicationHealth) {
	r := e.repl
	h.StreamFirst = r.sealing.streamFirst.Load()
	if p := r.sealing.purgeErr.Load(); p != nil {
		h.Purge = *p
	}
	if l := e.Log(); l != nil {
		if segs, err := l.Segments(); err == nil && len(segs) > 0 {
			h.SealedThrough = segs[len(segs)-1].Last
		}
	}
}
