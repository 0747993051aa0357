package engine

import "github.com/hikoutei/hikoutei-go/aggregates"

// Stats returns the writer's counters.
func (e *Engine) Stats() Stats {
	var st Stats
	if e.writer() == nil {
		return st // a standby commits nothing
	}
	if err := e.onWriter(func() error { st = e.stats; return nil }); err != nil {
		return Stats{}
	}
	return st
}

// OutboxCounts returns the number of effects in every state: the read
// model's kept counts (projector.OutboxCounts), a read of a few rows on
// the writer whatever the store's history.
func (e *Engine) OutboxCounts() (map[aggregates.EffectState]int64, error) {
	var c map[aggregates.EffectState]int64
	if e.writer() == nil {
		return map[aggregates.EffectState]int64{}, nil // a standby (its read model is the follower's)
	}
	err := e.onWriter(func() (err error) { c, err = e.proj.OutboxCounts(); return err })
	return c, err
}
