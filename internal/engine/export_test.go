package engine

import (
	"math"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
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

// RowStatesBoth reads the state of the Input rows of anchors of tab both
// in bulk (as a window of a pass) and one row at a time.
func (e *Engine) RowStatesBoth(tab, entity string, anchors []string) (bulk, single map[string]aggregates.RowState, err error) {
	err = e.onWriter(func() error {
		if bulk, err = e.rowStatesOf(tab, entity, anchors); err != nil {
			return err
		}
		single = map[string]aggregates.RowState{}
		for _, a := range anchors {
			if single[a], err = e.rowState(tab, entity, a); err != nil {
				return err
			}
		}
		return nil
	})
	return bulk, single, err
}

// SetCanonicalWindow sets how many rows showing the store's last write
// one anti-entropy pass compares with canonical state (0: the default).
func (e *Engine) SetCanonicalWindow(n int) error {
	return e.onWriter(func() error { e.canonicalRows = n; return nil })
}

// RepairDry decides the tab seen as a reconciliation pass of the store's
// sync target would, comparing at most window rows that show the store's
// last write with canonical state (0: every row), and commits nothing: it
// returns the report and the corrections. The tab's canonical window
// moves on as a pass moves it.
func (e *Engine) RepairDry(seen aggregates.SeenTab, window int) (rep aggregates.RepairReport, q []aggregates.Queue, err error) {
	err = e.onWriter(func() error {
		e.canonicalRows = window
		if window == 0 {
			e.canonicalRows = math.MaxInt
		}
		defer func() { e.canonicalRows = 0 }()
		spec, _ := e.sheet.Schema.Tab(seen.Tab)
		rows, err := e.proj.TabRowsOf(e.sheet.Spreadsheet, seen.Tab, e.proj.Checkpoint())
		if err != nil {
			return err
		}
		k := passKey{kind: passRepair, spreadsheet: e.sheet.Spreadsheet, tab: seen.Tab}
		rep, q, _, err = e.repairRows(e.canonicalCursorOf(k), spec, seen, rows, &aggregates.RepairReport{})
		return err
	})
	return rep, q, err
}

// KnownRepairOf is KnownRepair for the store's sync target.
func (e *Engine) KnownRepairOf(tabs ...string) (sheetsio.BodyDigest, error) {
	return e.KnownRepair(e.sheet.Spreadsheet, tabs)
}

// RepairUndecoded is Repair of tab for the store's sync target, as a pass
// whose read at base digested to body hands it over (not decoded).
func (e *Engine) RepairUndecoded(tab string, base uint64, body [32]byte) (aggregates.RepairReport, error) {
	return e.Repair(e.sheet.Spreadsheet, base, aggregates.SeenTab{Tab: tab, Body: body, Undecoded: true})
}

// ObserveInTurnsOf makes an observation decide n rows a writer turn (0:
// observeWindow) and run between (nil: nothing) off the writer after
// each turn of rows but the last.
func (e *Engine) ObserveInTurnsOf(n int, between func()) error {
	return e.onWriter(func() error { e.observeSize, e.betweenWindows = n, between; return nil })
}

// ForgetUnchanged forgets the read each kind of pass last found nothing to
// change in (unchanged.go), so the next pass over the same read decides it
// again (a benchmark repeating one pass).
func (e *Engine) ForgetUnchanged() error {
	return e.onWriter(func() error { clear(e.unchanged); return nil })
}
