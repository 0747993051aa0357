package engine

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Test hooks for the engine's external tests (package engine_test).

// ReadModel runs fn on the writer goroutine with the live read model, for
// the tests' read-only queries of state no public method reports
// (quarantine evidence, candidates, effects by state, visible hashes).
func (e *Engine) ReadModel(fn func(*projector.Projector) error) error {
	return e.onWriter(func() error { return fn(e.proj) })
}

// AppendDecisions appends decided events as one fenced commit and projects
// them, as the engine's workers do: tests record what an older build
// recorded (a legacy conflict).
func (e *Engine) AppendDecisions(ds ...aggregates.Decision) error {
	return e.onWriter(func() error {
		var ch aggregates.Changes
		for _, d := range ds {
			ch.AddDecision(d)
		}
		return e.commitWorker(ch, e.cfg.Clock.Now())
	})
}

// CheckChainEvery sets Config.ChainCheckEvery of the running store (on
// the writer goroutine, which reads it).
func (e *Engine) CheckChainEvery(n uint64) error {
	return e.onWriter(func() error { e.cfg.ChainCheckEvery = n; return nil })
}

// BindRoutes records the routing of every entity tab, as a sync start
// does.
func (e *Engine) BindRoutes() error { return e.bindRoutes() }
