package engine

import (
	"context"
	"fmt"

	"github.com/hikoutei/hikoutei-go/events"
)

// DefaultChainCheckEvery is how many records a running store appends
// between two checks of its hash chain (Config.ChainCheckEvery).
const DefaultChainCheckEvery = 100_000

// chainChecks runs, beside the writer, the checks of the records the
// store appended since its last chain checkpoint, so that the checkpoint
// keeps up with the log and the next open walks only what was appended
// since the last check, however long the store ran.
type chainChecks struct {
	bell chan struct{} // rung by the writer when a check is due (buffered: one pending)
	done chan struct{} // closed when the checker has stopped
	rung uint64        // the read model's checkpoint at the last ring (writer-owned)
}

// startChainChecks starts the checker goroutine; it stops with the writer.
func (e *Engine) startChainChecks() {
	e.chains = &chainChecks{bell: make(chan struct{}, 1), done: make(chan struct{}), rung: e.proj.Checkpoint()}
	go e.runChainChecks()
}

// runChainChecks checks the chain each time the bell rings, until stop.
func (e *Engine) runChainChecks() {
	defer close(e.chains.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-e.stop
		cancel()
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.chains.bell:
			e.checkChainSince(ctx)
		}
	}
}

// checkChainSince walks the records after the chain checkpoint and
// records a new one at the end; a damaged record refuses commits from
// then on, as one found at open does.
func (e *Engine) checkChainSince(ctx context.Context) {
	opts := events.ChainVerifyOptions{AcceptSalvageHoles: true, FromCheckpoint: true}
	rep, err := e.Log().VerifyChain(ctx, opts)
	switch {
	case ctx.Err() != nil:
	case err != nil:
		e.setFault(fmt.Errorf("%w: commits are refused until it is repaired (hikoutei doctor, hikoutei salvage): %w", ErrLogDamaged, err))
		e.log.Error("the log's hash chain is broken", "err", err.Error())
	default:
		e.recordChainCheckpoint(rep)
	}
}

// ringChainCheck rings the checker when ChainCheckEvery records were
// applied since the last ring (called by the writer after each batch).
func (e *Engine) ringChainCheck() {
	c := e.chains
	if c == nil || e.proj.Checkpoint()-c.rung < e.cfg.ChainCheckEvery {
		return
	}
	c.rung = e.proj.Checkpoint()
	select {
	case c.bell <- struct{}{}:
	default: // a check is pending: it reaches the head it finds
	}
}

// stopChainChecks waits for the checker to stop (after e.stop closed).
func (e *Engine) stopChainChecks() {
	if e.chains != nil {
		<-e.chains.done
	}
}
