package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// followRetry is the pause before a standby follows the stream again
// after its reader stopped (wall time: a retry pause, not a decision).
const followRetry = 200 * time.Millisecond

// standbyState is a warm standby's side: its own log.db (file-locked, no
// lease), which follows the stream, and the goroutine that follows and
// watches the lease across hosts.
type standbyState struct {
	log        *events.Log // closed at the takeover
	cancel     context.CancelFunc
	done       chan struct{} // closed when the standby goroutine ended
	checkpoint atomic.Uint64 // the read model's checkpoint
	lastErr    atomic.Pointer[error]
}

// openStandby opens dir as a warm standby: log.db (created in a missing or
// empty directory, file-locked, no writer lease) catches up with the
// stream, the entities are declared from it, the read model is brought up
// to it, then a goroutine follows the stream into log.db and the read
// model and watches the lease: when the takeover rule (I02) allows it, it
// acquires the lease and the store becomes the primary (takeOver).
func (e *Engine) openStandby(entities Entities) error {
	if err := prepareStandbyDir(e.dir); err != nil {
		return err
	}
	if e.repl.storeID == "" {
		return fmt.Errorf("%w: no primary has written store %s yet: start the primary first", ErrStandbyTooEarly, e.repl.store)
	}
	l, err := events.OpenLog(filepath.Join(e.dir, events.LogFileName), events.Options{Clock: e.cfg.Clock, OpenTimeout: e.cfg.OpenTimeout,
		NoSync: e.cfg.NoSync, StoreID: e.repl.storeID, Segments: e.cfg.Segments})
	if err != nil {
		return events.DescribeLocked(e.dir, err)
	}
	sb := &standbyState{log: l, done: make(chan struct{})}
	e.repl.sb = sb
	if err := e.prepareStandby(entities); err != nil {
		return errors.Join(err, e.closeReadModel(), l.Close())
	}
	ctx, cancel := context.WithCancel(e.repl.ctx)
	sb.cancel = cancel
	go e.runStandby(ctx)
	e.log.Info("replication: standby", "store", e.repl.store, "head", sb.checkpoint.Load())
	return nil
}

// prepareStandbyDir applies OpenWriter's creation rule: a store directory
// with a log, or a missing or empty one (created 0700).
func prepareStandbyDir(dir string) error {
	err := events.RequireLog(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.MkdirAll(dir, 0o700)
}

func (e *Engine) prepareStandby(entities Entities) error {
	sb := e.repl.sb
	if err := replication.CatchUp(e.repl.ctx, e.repl.stream, sb.log); err != nil {
		return fmt.Errorf("replication: catch up with the stream: %w", err)
	}
	if err := e.declare(entities); err != nil {
		return err
	}
	if err := e.openReadModel(); err != nil {
		return err
	}
	sb.checkpoint.Store(e.proj.Checkpoint())
	return nil
}

// closeReadModel closes what openReadModel opened (a failed open).
func (e *Engine) closeReadModel() error {
	var err error
	if e.pool != nil {
		err = e.pool.Close()
	}
	if e.proj != nil {
		err = errors.Join(err, e.proj.Close())
	}
	return err
}

// runStandby follows the stream until the lease may be taken, then takes
// the store over (or until Close).
func (e *Engine) runStandby(ctx context.Context) {
	sb := e.repl.sb
	defer close(sb.done)
	fctx, stopFollow := context.WithCancel(ctx)
	followed := make(chan struct{})
	go func() {
		defer close(followed)
		e.follow(fctx)
	}()
	acquired := e.watchLease(ctx)
	stopFollow()
	<-followed
	if !acquired {
		return
	}
	if err := e.takeOver(); err != nil {
		e.takeoverFailed(err)
	}
}

// follow applies the stream's commits to log.db and the read model as
// they are stored, starting again after a failure, until ctx ends.
func (e *Engine) follow(ctx context.Context) {
	sb := e.repl.sb
	for ctx.Err() == nil {
		err := e.projectStandby()
		if err == nil {
			var have uint64
			if have, err = sb.log.ReplicaHead(); err == nil {
				e.noteStreamFirst(ctx)
				err = e.repl.stream.Follow(ctx, have+1, e.applyFollowed)
			}
		}
		if ctx.Err() != nil {
			return
		}
		sb.lastErr.Store(&err)
		e.log.Warn("replication: following the stream failed; retrying", "store", e.repl.store, "err", err.Error())
		select {
		case <-ctx.Done():
		case <-time.After(followRetry):
		}
	}
}

// applyFollowed writes one stream commit into log.db and projects it.
func (e *Engine) applyFollowed(c replication.Commit) error {
	if err := e.repl.sb.log.ApplyReplica(c.Seq, c.Records); err != nil {
		return err
	}
	if err := e.projectStandby(); err != nil {
		return err
	}
	if k := e.cfg.Keys; k != nil && k.Followed != nil {
		k.Followed()
	}
	return nil
}

// projectStandby brings the read model up to log.db's head.
func (e *Engine) projectStandby() error {
	if err := e.catchUp(context.Background(), "catch-up", nil); err != nil {
		return fmt.Errorf("project the followed commits: %w", err)
	}
	e.repl.sb.checkpoint.Store(e.proj.Checkpoint())
	e.repl.sb.lastErr.Store(nil)
	e.subs.committed()
	return nil
}

// watchLease reads the lease every WatchInterval (store clock) and
// acquires it once MayTakeOver allows (vacant, expired, or a heartbeat
// older than 15 s: I02). It reports whether it acquired it (false: ctx
// ended).
func (e *Engine) watchLease(ctx context.Context) bool {
	r := e.repl
	every := r.cfg.WatchInterval
	if every <= 0 {
		every = DefaultWatchInterval
	}
	for {
		select {
		case <-ctx.Done():
			return false
		case <-e.cfg.Clock.After(every):
		}
		if e.mayTakeOver() && e.tryAcquire() {
			return true
		}
	}
}

// mayTakeOver reads the lease and applies the takeover rule.
func (e *Engine) mayTakeOver() bool {
	r := e.repl
	ctx, cancel := context.WithTimeout(r.ctx, replicaOpTimeout)
	defer cancel()
	cur, _, err := r.leases.Current(ctx, r.store)
	if err != nil {
		e.log.Warn("replication: reading the lease failed", "store", r.store, "err", err.Error())
		return false
	}
	if cur == nil {
		return true
	}
	r.seen.Store(cur.Epoch)
	return replication.MayTakeOver(*cur, e.cfg.Clock.Now()) != replication.ReasonNone
}

func (e *Engine) tryAcquire() bool {
	rec, err := e.repl.acquire()
	if err != nil {
		if !errors.Is(err, replication.ErrLeaseHeld) {
			e.log.Warn("replication: taking the lease failed", "store", e.repl.store, "err", err.Error())
		}
		return false
	}
	e.repl.mine.Store(&rec)
	return true
}

// takeOver turns the standby into the primary on the same directory: the
// follower stopped, log.db is reopened as a writer (catching up with the
// stream to its head first, then the local lease elected at the new
// epoch, whose event fences the deposed primary at the server), the read
// model catches up, and the writer, NATS, the sync workers and the lease
// renewal start.
func (e *Engine) takeOver() error {
	sb := e.repl.sb
	if err := sb.log.Close(); err != nil {
		return err
	}
	wo := events.WriterOptions{
		Log:       events.Options{Clock: e.cfg.Clock, OpenTimeout: e.cfg.OpenTimeout, NoSync: e.cfg.NoSync, Segments: e.cfg.Segments},
		Operation: e.cfg.Operation, HeartbeatInterval: e.cfg.HeartbeatInterval, LeaseTTL: e.cfg.LeaseTTL,
	}
	e.replicatedWriter(&wo)
	w, err := events.OpenWriter(e.dir, wo)
	if err != nil {
		return err
	}
	e.w.Store(w)
	if k := e.cfg.Keys; k != nil && k.Takeover != nil {
		if err := k.Takeover(); err != nil {
			return fmt.Errorf("personal data keys: %w", err)
		}
	}
	if err := e.becomeWriter(); err != nil {
		return err
	}
	e.becamePrimary()
	return nil
}

// becomeWriter finishes a takeover once the writer is open.
func (e *Engine) becomeWriter() error {
	if err := e.recordLogGap(); err != nil {
		return err
	}
	if err := e.recordSchema(); err != nil {
		return err
	}
	if err := e.catchUp(context.Background(), "catch-up", nil); err != nil {
		return err
	}
	e.startWriter()
	if err := e.startNATS(); err != nil {
		return err
	}
	e.startSync()
	e.retentionReady()
	return nil
}

// takeoverFailed records a takeover that could not finish: commits are
// refused with the cause, the lease across hosts is given up so another
// standby can take over, and Ended is closed.
func (e *Engine) takeoverFailed(cause error) {
	r := e.repl
	err := fmt.Errorf("%w: %w", ErrTakeoverFailed, cause)
	e.setFault(err)
	e.log.Error("replication: takeover failed; the lease is given up", "store", r.store, "err", cause.Error())
	if rerr := r.releaseLease(); rerr != nil {
		e.log.Warn("replication: releasing the lease failed", "store", r.store, "err", rerr.Error())
	}
	r.mine.Store(nil)
	r.end(err)
}

// stopStandby stops a standby's goroutine and waits for it (a takeover
// under way finishes first).
func (e *Engine) stopStandby() {
	if e.repl == nil || e.repl.sb == nil || e.repl.sb.cancel == nil {
		return
	}
	e.repl.sb.cancel()
	<-e.repl.sb.done
}

// closeStandby closes a store that is (still) a standby.
func (e *Engine) closeStandby() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	err := e.closeReadModel()
	if l := e.repl.sb.log; l != nil {
		err = errors.Join(err, ignoreClosed(l.Close()))
	}
	e.repl.close()
	return err
}

func ignoreClosed(err error) error {
	if errors.Is(err, events.ErrLogClosed) {
		return nil
	}
	return err
}

// standbyErr is what a standby answers a commit.
func (e *Engine) standbyErr() error {
	return fmt.Errorf("%w: the replicated store %q is written by its primary; this process follows it", ErrStandby, e.repl.store)
}

// standbyHealth is a standby's Local health: its role, and why following
// fails, if it does.
func (e *Engine) standbyHealth() error {
	if p := e.fault.Load(); p != nil {
		return *p // a failed takeover
	}
	err := e.standbyErr()
	if p := e.repl.sb.lastErr.Load(); p != nil && *p != nil {
		err = fmt.Errorf("%w; following the stream fails: %w", err, *p)
	}
	return err
}
