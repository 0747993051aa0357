package engine

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
)

// settleMisdirected adds the settlement of a write that landed on another
// row (C06) to ch: the re-queue of the intended row and the repair of the
// displaced one (aggregates.MisdirectedQueues, each at its row's next
// stream_sequence), the supersede of the effect and the evidence
// (aggregates.DecideMisdirected). A stale claim adds nothing.
func (e *Engine) settleMisdirected(ch *aggregates.Changes, fx aggregates.Effect, st effects.Settlement, b *batchState, now time.Time) error {
	md, err := aggregates.MisdirectionOf(st.Outcome)
	if err != nil {
		return err
	}
	intended, err := e.canonical(fx.Entity, fx.EntityID)
	if err != nil {
		return err
	}
	var displaced aggregates.Canonical
	if entity, id, ok := aggregates.Displaced(fx, md, e.sheet); ok {
		if displaced, err = e.canonical(entity, id); err != nil {
			return err
		}
	}
	rq, rp := aggregates.MisdirectedQueues(fx, md, e.sheet, intended, displaced)
	work := b.child() // merged only if the claim is current
	var queued []aggregates.Decision
	ids := [2]string{}
	for i, q := range []*aggregates.Queue{rq, rp} {
		if q == nil {
			continue
		}
		d, id, err := e.decideQueued(*q, work, now)
		if err != nil {
			return err
		}
		queued, ids[i] = append(queued, d), id
	}
	ds, err := aggregates.DecideMisdirected(fx, st.ClaimToken, md, e.sheet, ids[0], ids[1], now)
	if err != nil {
		return err
	}
	b.merge(work)
	for _, d := range append(ds, queued...) {
		ch.AddDecision(d)
	}
	return nil
}

// decideQueued decides q at its row's next stream_sequence as of b.
func (e *Engine) decideQueued(q aggregates.Queue, b *batchState, now time.Time) (aggregates.Decision, string, error) {
	stream := events.OutboxStream(q.Target.Binding)
	v, err := e.version(stream, b)
	if err != nil {
		return aggregates.Decision{}, "", err
	}
	d, id, err := aggregates.DecideQueue(v, q, now)
	if err == nil {
		b.setVersion(stream, v+1)
	}
	return d, id, err
}

// canonical is a record's current values ("" entity: none).
func (e *Engine) canonical(entity, id string) (aggregates.Canonical, error) {
	if entity == "" {
		return aggregates.Canonical{}, nil
	}
	vals, exists, err := e.proj.EntityValues(entity, id)
	return aggregates.Canonical{Values: vals, Exists: exists}, err
}
