package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
)

// setFault records err as why commits fail now (Health's Local) and
// returns it.
func (e *Engine) setFault(err error) error {
	e.fault.Store(&err)
	return err
}

// clearFault clears the recorded fault if it is of kind (a commit or a
// repair succeeded). An uncertain log commit is never cleared.
func (e *Engine) clearFault(kind error) {
	if p := e.fault.Load(); p != nil && errors.Is(*p, kind) {
		e.fault.CompareAndSwap(p, nil)
	}
}

// checkLogIntegrity walks the log's records and chain links at open
// (accepting the holes a salvage recorded): those appended after the
// log's chain checkpoint when the log vouches for it, every one otherwise
// (a store made before checkpoints, a checkpoint the log does not vouch
// for); a walk that passes records a new checkpoint at its end. A damaged
// log still opens for reads, but every commit is refused (ErrLogDamaged,
// Health's Local), so nothing is appended to it. Damage to a record at or
// before the checkpoint is found by a whole walk (Verify, doctor), not here.
func (e *Engine) checkLogIntegrity() {
	opts := events.ChainVerifyOptions{AcceptSalvageHoles: true, FromCheckpoint: true}
	rep, err := e.Log().VerifyChain(context.Background(), opts)
	if rep != nil && rep.Distrusted != "" {
		e.log.Warn("the log does not vouch for its chain checkpoint: verified the whole chain", "reason", rep.Distrusted)
	}
	if err != nil {
		e.setFault(fmt.Errorf("%w: commits are refused until it is repaired (hikoutei doctor, hikoutei salvage): %w", ErrLogDamaged, err))
		return
	}
	e.recordChainCheckpoint(rep)
}

// recordChainCheckpoint records where the complete walk rep ended as the
// log's chain checkpoint (a failure only costs the next open a longer walk).
func (e *Engine) recordChainCheckpoint(rep *events.ChainReport) {
	if e.writer() == nil {
		return // a standby's log is the stream's: it records nothing
	}
	if _, err := e.Log().RecordChainCheckpoint(rep); err != nil {
		e.log.Warn("could not record the log's chain checkpoint: the next open verifies from the last one", "err", err)
	}
}

// refusing returns the fault that stops every commit until reopen.
func (e *Engine) refusing() error {
	p := e.fault.Load()
	if p == nil {
		return nil
	}
	for _, kind := range []error{ErrLogCommitUncertain, events.ErrReplicaFenced, ErrTakeoverFailed, ErrLogDamaged, events.ErrLogFileReplaced} {
		if errors.Is(*p, kind) {
			return *p
		}
	}
	return nil
}

// logWriteFailed classifies a failed log commit. The log is re-read: when
// its head did not move past prevHead nothing of the batch is in it
// (ErrLogWrite: the store goes on, e.g. once disk space is freed);
// otherwise the records reached the file although the commit failed, so
// their durability is unknown (ErrLogCommitUncertain: the store refuses
// commits until reopened).
func (e *Engine) logWriteFailed(err error, prevHead uint64) error {
	if rerr, ok := e.replicaRefused(err); ok {
		return rerr
	}
	head, herr := e.writer().Log().Head()
	if e.repl != nil && herr == nil && head <= prevHead {
		// The stream stored the commit before the local commit failed:
		// the next open applies it from the stream.
		return e.setFault(fmt.Errorf("%w: the replicated log stored the commit but log.db could not; close and reopen the store "+
			"(it catches up from the stream first): %w", ErrLogCommitUncertain, err))
	}
	if herr == nil && head <= prevHead {
		return e.setFault(fmt.Errorf("%w: nothing was committed: %w", ErrLogWrite, err))
	}
	return e.setFault(fmt.Errorf("%w: the log's commit failed after writing (head %d, was %d); reopen the store: %w",
		ErrLogCommitUncertain, head, prevHead, errors.Join(err, herr)))
}

// appendRefused classifies an append the log refused before committing
// (nothing was written): fencing errors pass as they are; anything else
// is a failure to write (ErrLogWrite), reported by Health until a commit
// succeeds.
func (e *Engine) appendRefused(err error) error {
	if rerr, ok := e.replicaRefused(err); ok {
		return rerr
	}
	if errors.Is(err, events.ErrLogFileReplaced) {
		return e.logFileReplaced(err)
	}
	for _, fence := range []error{events.ErrStaleWriterFence, events.ErrLeaseExpired, events.ErrLogClosed} {
		if errors.Is(err, fence) {
			return err
		}
	}
	return e.setFault(fmt.Errorf("%w: nothing was committed: %w", ErrLogWrite, err))
}

// prevHead is the log head before a batch whose results are res: one
// less than the first sequence any unit was given.
func prevHead(res []events.UnitResult) (uint64, bool) {
	var first uint64
	for _, r := range res {
		if r.First != 0 && (first == 0 || r.First < first) {
			first = r.First
		}
	}
	return first - 1, first != 0
}

// logFileReplaced records that the store directory's log.db is no longer
// the file this store has open (the writer's heartbeat or an append
// found it): every commit is refused from then on (Health's Local, code
// log_file_replaced), and it is logged once, loudly.
func (e *Engine) logFileReplaced(err error) error {
	if p := e.fault.Load(); p != nil && errors.Is(*p, events.ErrLogFileReplaced) {
		return *p
	}
	e.log.Error("log.db was replaced or removed under the running store: commits are refused; this process holds the only copy of its log open: "+
		"back it up before stopping the store (`hikoutei backup --dir DIR --out FILE`, Store.Backup)", "dir", e.dir, "code", events.ErrLogFileReplaced.Error(), "err", err)
	return e.setFault(err)
}

// checkLogFile checks, as the heartbeat does, that log.db is still the
// file open (a stat: Health answers from local state, I29).
func (e *Engine) checkLogFile() {
	if w := e.w.Load(); w != nil && !e.isClosed() {
		if err := w.Log().CheckFile(); err != nil {
			e.logFileReplaced(err)
		}
	}
}
