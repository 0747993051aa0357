package hikoutei

import (
	"errors"
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
	s := newStore(dir, Options{})
	if err := s.declare(entities); err != nil {
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
	p, err := openReplayTarget(target, l.StoreID(), s)
	if err != nil {
		return 0, err
	}
	err = applyLog(l, p, upTo, "rebuild", opts.Progress)
	cp := p.Checkpoint()
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	return cp, err
}

func openReplayTarget(target, storeID string, s *Store) (*projector.Projector, error) {
	p, err := projector.Open(target, projector.Options{StoreID: storeID, Schema: s.schema()})
	if err != nil {
		return nil, err
	}
	if p.Checkpoint() != 0 {
		p.Close()
		return nil, fmt.Errorf("replay target %s already holds a read model", target)
	}
	return p, nil
}

// EventSource yields events in ascending seq order to fn (e.g. a reader of
// the JetStream mirror).
type EventSource func(fn func(events.Event) error) error

// ReplayEvents builds a fresh read model at target from events delivered by
// src — for auditors replaying a store from its NATS mirror on another
// machine. storeID is the log's store id (read.sqlite records it). Events
// must be dense from 1; a gap fails with ErrReplayGap. It returns the
// checkpoint reached.
func ReplayEvents(target, storeID string, src EventSource, opts ReplayOptions, entities ...EntityDef) (uint64, error) {
	s := newStore("", Options{})
	if err := s.declare(entities); err != nil {
		return 0, err
	}
	p, err := openReplayTarget(target, storeID, s)
	if err != nil {
		return 0, err
	}
	batch := make([]events.Event, 0, catchUpBatch)
	prog := Progress{Phase: "rebuild"}
	flush := func() error {
		if err := p.Apply(batch); err != nil {
			return err
		}
		prog.Done += uint64(len(batch))
		batch = batch[:0]
		if opts.Progress != nil {
			opts.Progress(prog)
		}
		return nil
	}
	up := aggregates.Upcasters()
	err = src(func(e events.Event) error {
		if err := up.Apply(&e); err != nil {
			return err
		}
		if want := p.Checkpoint() + uint64(len(batch)) + 1; e.Seq != want {
			return fmt.Errorf("%w: got seq %d, want %d", ErrReplayGap, e.Seq, want)
		}
		batch = append(batch, e)
		if len(batch) == catchUpBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	cp := p.Checkpoint()
	return cp, errors.Join(err, p.Close())
}

// ErrReplayGap: an event source skipped a sequence.
var ErrReplayGap = errors.New("replay_sequence_gap")
