package hikoutei

import (
	"fmt"
	"path/filepath"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// ReplayOptions configures Replay.
type ReplayOptions struct {
	UpTo     uint64         // last sequence to apply (0 = the log head)
	Progress func(Progress) // called after each applied batch
}

// Replay builds a fresh read model at target from the log of the store in
// dir, without taking the writer lease (it opens log.db read-only, so the
// store must not be open for writing in another process). Auditors use it
// to rebuild a store's read model; tests use it to prove I23. It returns
// the checkpoint reached. Errors: events.ErrStoreLocked, ErrInvalidEntity,
// *events.CorruptRecordError, projector errors; target must not exist.
func Replay(dir, target string, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	s, err := newStore(dir, Options{}, entities)
	if err != nil {
		return 0, err
	}
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, Upcasters: aggregates.Upcasters()})
	if err != nil {
		return 0, err
	}
	defer l.Close()
	head, err := l.Head()
	if err != nil {
		return 0, err
	}
	upTo := opts.UpTo
	if upTo == 0 || upTo > head {
		upTo = head
	}
	p, err := projector.Open(target, projector.Options{StoreID: l.StoreID(), Schema: s.schema()})
	if err != nil {
		return 0, err
	}
	if p.Checkpoint() != 0 {
		p.Close()
		return 0, fmt.Errorf("replay target %s already holds a read model", target)
	}
	err = applyLog(l, p, upTo, "rebuild", opts.Progress)
	cp := p.Checkpoint()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return cp, err
}
