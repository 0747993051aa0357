package engine

import "github.com/hikoutei/hikoutei-go/aggregates"

// Stats returns the writer's counters.
func (e *Engine) Stats() Stats {
	var st Stats
	if err := e.onWriter(func() error { st = e.stats; return nil }); err != nil {
		return Stats{}
	}
	return st
}

// OutboxCounts returns the number of effects in every state.
func (e *Engine) OutboxCounts() (map[aggregates.EffectState]int64, error) {
	var c map[aggregates.EffectState]int64
	err := e.onWriter(func() (err error) { c, err = e.proj.OutboxCounts(); return err })
	return c, err
}
