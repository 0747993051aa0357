package engine

import (
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
)

// settleMisdirected adds the settlements of misdirected writes (C06,
// aggregates.DecideMisdirectedAll, with each record's canonical values)
// to ch and returns the stale claims; err is a read-model failure.
func (e *Engine) settleMisdirected(ch *aggregates.Changes, s []effects.Settlement, known map[string]aggregates.Effect, now time.Time) ([]error, error) {
	var claims []aggregates.MisdirectedClaim
	var bad []error
	for _, st := range s {
		md, err := aggregates.MisdirectionOf(st.Outcome)
		if err != nil {
			bad = append(bad, err)
			continue
		}
		c, err := e.misdirectedClaim(known[st.ID], st.ClaimToken, md)
		if err != nil {
			return nil, err
		}
		claims = append(claims, c)
	}
	b := newBatchState(nil) // outbox versions of the effects this commit queues
	queue := func(q aggregates.Queue) (aggregates.Decision, string, error) { return e.decideQueued(q, b, now) }
	ds, stale := aggregates.DecideMisdirectedAll(claims, e.sheet, queue, now)
	for _, d := range ds {
		ch.AddDecision(d)
	}
	return append(bad, stale...), nil
}

// misdirectedClaim reads the canonical values a misdirected claim needs.
func (e *Engine) misdirectedClaim(fx aggregates.Effect, token string, md aggregates.Misdirected) (aggregates.MisdirectedClaim, error) {
	c := aggregates.MisdirectedClaim{Effect: fx, Token: token, Where: md}
	var err error
	if c.Intended, err = e.canonical(fx.Entity, fx.EntityID); err != nil {
		return c, err
	}
	if entity, id, ok := aggregates.Displaced(fx, md, e.sheet); ok {
		c.Displaced, err = e.canonical(entity, id)
	}
	return c, err
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
