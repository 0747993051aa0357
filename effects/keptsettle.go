package effects

import (
	"errors"
	"slices"
	"sync"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// keptSettlements are the settlements of sent batches whose commit
// failed (a full disk or a failing write refused it: nothing of it was
// committed). Their effects stay processing, holding their rows (I07),
// until the commit is made: the next pass commits them before it claims
// anything, so a dispatcher that runs on once the space is back settles
// what it sent, as a restart's RecoverProcessing would have.
type keptSettlements struct {
	mu  sync.Mutex // the pass loop and a settlement's goroutine (settleAsync)
	out []Settlement
}

// keep holds out for the next pass when err says its commit failed.
func (k *keptSettlements) keep(out []Settlement, err error) {
	if !uncommitted(err) {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.out = append(k.out, out...)
}

// take returns and clears the settlements kept.
func (k *keptSettlements) take() []Settlement {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := k.out
	k.out = nil
	return out
}

// uncommitted reports whether Outbox.Settle's err means its commit was
// not made: any failure but stale claims (settled before: reported
// beside a commit that was made) and fencing (the loop stops; the next
// run's RecoverProcessing finds the effects).
func uncommitted(err error) bool {
	if err == nil || errors.Is(err, ErrDisplaced) {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return slices.ContainsFunc(j.Unwrap(), uncommitted)
	}
	return !errors.Is(err, aggregates.ErrStaleClaim)
}

// settleKept commits the settlements a failed commit left (see
// keptSettlements); when it fails again they are kept for the next pass
// and the pass claims nothing.
func (d *Dispatcher) settleKept() error {
	out := d.kept.take()
	if len(out) == 0 {
		return nil
	}
	err := fenced(d.cfg.Outbox.Settle(out))
	d.kept.keep(out, err)
	if errors.Is(err, ErrDisplaced) || uncommitted(err) {
		return err
	}
	return nil // stale claims only: those effects were settled before
}
