package engine

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// checkRoutes refuses routes that cannot apply: one without a spreadsheet
// or an entity, a spreadsheet named twice (the default's included), an
// entity routed twice or not declared in reg. Errors:
// ErrSyncStartup wrapping the ErrSyncRoute… sentinel.
func checkRoutes(c *SyncConfig, reg *Registry) error {
	ids, routed := map[string]bool{c.SpreadsheetID: true}, map[string]bool{}
	for i, r := range c.Routes {
		if r.SpreadsheetID == "" || len(r.Entities) == 0 {
			return fmt.Errorf("%w: %w: route %d needs a spreadsheet id and an entity", ErrSyncStartup, ErrSyncRouteEmpty, i+1)
		}
		if ids[r.SpreadsheetID] {
			return fmt.Errorf("%w: %w: route %d names the default spreadsheet or another route's", ErrSyncStartup, ErrSyncRouteSpreadsheetTwice, i+1)
		}
		ids[r.SpreadsheetID] = true
		for _, ent := range r.Entities {
			if routed[ent] {
				return fmt.Errorf("%w: %w: %s", ErrSyncStartup, ErrSyncRouteEntityTwice, ent)
			}
			routed[ent] = true
			if _, ok := reg.Shape(ent); !ok {
				return fmt.Errorf("%w: %w: %s", ErrSyncStartup, ErrSyncRouteEntityUnknown, ent)
			}
		}
	}
	return nil
}

// setupRoutes gives each route its sync state (its own target, its
// entities' tabs) and tells the sheet which tabs show elsewhere; the
// default target keeps the entities of no route.
func (e *Engine) setupRoutes(reg *Registry) error {
	c := e.cfg.Sync
	if c == nil || len(c.Routes) == 0 {
		return nil
	}
	if err := checkRoutes(c, reg); err != nil {
		return err
	}
	e.sheet.Routes = map[string]string{}
	routed := map[string]bool{}
	for _, r := range c.Routes {
		cfg := *c
		cfg.Name, cfg.SpreadsheetID, cfg.Routes, cfg.Wake, cfg.PollWake = TargetKey(r.SpreadsheetID), r.SpreadsheetID, nil, nil, nil
		s, err := newTargetState(cfg, reg, func(ent string) bool { return slices.Contains(r.Entities, ent) })
		if err != nil {
			return err
		}
		for _, ent := range r.Entities {
			routed[ent] = true
			for _, tab := range []string{layout.SystemTabName(ent), layout.InputTabName(ent)} {
				e.sheet.Routes[tab] = cfg.Name
			}
		}
		e.routes = append(e.routes, s)
	}
	s, err := newTargetState(e.sync.cfg, reg, func(ent string) bool { return !routed[ent] })
	if err != nil {
		return err
	}
	e.sync.schema, e.sync.inputs = s.schema, s.inputs
	return nil
}

// newTargetState is the sync state of a target showing the entities keep
// accepts.
func newTargetState(cfg SyncConfig, reg *Registry, keep func(string) bool) (*syncState, error) {
	schema, err := layoutOf(reg, keep)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	sh := effects.Sheet{Spreadsheet: cfg.Name, Schema: schema}
	return &syncState{cfg: cfg, schema: schema, inputs: sh.InputTabs(), done: make(chan error, 1)}, nil
}

// targets lists every sync target's state, the default's first (nil
// without sync).
func (e *Engine) targets() []*syncState {
	if e.sync == nil {
		return nil
	}
	return append([]*syncState{e.sync}, e.routes...)
}

// targetNamed is the state of the sync target called name (nil: none).
func (e *Engine) targetNamed(name string) *syncState {
	for _, s := range e.targets() {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

// entityTarget is the state of the target that shows entity's tabs.
func (e *Engine) entityTarget(entity string) *syncState {
	return cmp.Or(e.targetNamed(e.sheet.TargetOf(layout.SystemTabName(entity))), e.sync)
}

// Targets names the store's sync targets, the default's first: one per
// spreadsheet (none without sync).
func (e *Engine) Targets() []string {
	var out []string
	for _, s := range e.targets() {
		out = append(out, s.cfg.Name)
	}
	return out
}

// TargetOfSpreadsheet is the sync target a configured spreadsheet is
// synced as ("" when the store does not sync to it).
func (e *Engine) TargetOfSpreadsheet(id string) string {
	for _, s := range e.targets() {
		if s.cfg.SpreadsheetID == id {
			return s.cfg.Name
		}
	}
	return ""
}

// ProvisionTarget provisions the sync target called name (Provision for
// the default one). Errors: ErrSyncStartup for a name the store does not
// sync to; provider errors.
func (e *Engine) ProvisionTarget(ctx context.Context, name string) (*effects.Dispatcher, error) {
	s := e.targetNamed(name)
	if s == nil {
		return nil, fmt.Errorf("%w: no sync target %s", ErrSyncStartup, name)
	}
	return e.provisionTarget(ctx, s)
}

// TargetWorkers returns the dispatcher, poller and spreadsheet binding of
// the sync target called name (nil before it was provisioned).
func (e *Engine) TargetWorkers(name string) (*effects.Dispatcher, *effects.Poller, *effects.Sheet) {
	s := e.targetNamed(name)
	if s == nil {
		return nil, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disp, s.poller, &effects.Sheet{Spreadsheet: s.cfg.Name, Schema: s.schema}
}

// targetTabs is the tabs of entity rows target shows.
func (e *Engine) targetTabs(s *syncState) []string {
	var out []string
	for _, t := range s.schema.Tabs() {
		if t.Role == layout.RoleSystem || t.Role == layout.RoleInput {
			out = append(out, t.Name)
		}
	}
	return out
}

// routeInbound is a routed spreadsheet's poller's view of the engine:
// Sync_Conflicts lists every conflict in the default spreadsheet only, so
// the route's poller never reads it.
type routeInbound struct{ *Engine }

// WatchesChoices implements effects.Inbound: never for a route.
func (routeInbound) WatchesChoices() (bool, error) { return false, nil }

// targetMigrator migrates the layouts of one target's tabs in its own
// spreadsheet (effects.Migrator).
type targetMigrator struct {
	e *Engine
	s *syncState
}

// MigrateLayouts implements effects.Migrator.
func (m targetMigrator) MigrateLayouts(ctx context.Context) ([]string, error) {
	return m.e.migrateLayoutsOf(ctx, m.s)
}

// Migrating implements effects.Migrator.
func (m targetMigrator) Migrating(tab string) bool { return m.e.Migrating(tab) }

// onTarget keeps the notes on the tabs spreadsheet shows.
func (e *Engine) onTarget(spreadsheet string, notes []aggregates.CellNote) []aggregates.CellNote {
	return slices.DeleteFunc(notes, func(n aggregates.CellNote) bool { return e.sheet.TargetOf(n.Tab) != spreadsheet })
}

// shownBy keeps the tabs of set that target s shows (set itself
// without routes).
func (e *Engine) shownBy(s *syncState, set map[string]bool) map[string]bool {
	if len(e.routes) == 0 {
		return set
	}
	maps.DeleteFunc(set, func(tab string, _ bool) bool { return e.sheet.TargetOf(tab) != s.cfg.Name })
	return set
}

// tabsOf keeps the row tabs of entity that spreadsheet shows.
func (e *Engine) tabsOf(spreadsheet string) func(string) []string {
	return func(entity string) []string {
		return slices.DeleteFunc(e.rowTabs(entity), func(tab string) bool { return e.sheet.TargetOf(tab) != spreadsheet })
	}
}

// wakeFan is one kind of wake-up (dispatch or poll) shared by every
// target: src is what NATS or the process fill, outs the targets' own.
type wakeFan struct {
	src  <-chan struct{}
	outs []chan struct{}
}

// fanOut hands each hint of src to every one of outs (none blocks: a hint
// pending in an out merges with the new one) until ctx ends.
func fanOut(ctx context.Context, src <-chan struct{}, outs []chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-src:
			if !ok {
				return
			}
			for _, o := range outs {
				select {
				case o <- struct{}{}:
				default:
				}
			}
		}
	}
}

// bindRoutes records, before a target's workers start, which target
// shows each entity tab whose target is not the one last recorded: a tab
// a route sends elsewhere, or one whose route changed or was removed.
// A tab that moves leaves its old target's unsettled effects superseded
// and what that spreadsheet showed of it forgotten; the new target is
// backfilled with its rows. A store that never had routes records
// nothing (and reads the recorded targets once).
func (e *Engine) bindRoutes() error {
	return e.onWriter(func() error {
		recorded, err := e.proj.TabTargets()
		if err != nil || len(recorded) == 0 && len(e.routes) == 0 {
			return err
		}
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		for _, tab := range e.entityTabs() {
			if err := e.routeTab(&ch, tab, recorded[tab], now); err != nil {
				return err
			}
		}
		if ch.Empty() {
			return nil
		}
		return e.commitWorker(ch, now)
	})
}

// routeTab adds to ch the routing of tab when its target changed from
// last, the one recorded ("": none).
func (e *Engine) routeTab(ch *aggregates.Changes, tab, last string, now time.Time) error {
	target := e.sheet.TargetOf(tab)
	if last == target {
		return nil
	}
	if last == "" && target == e.sync.cfg.Name {
		return nil // never routed: in the default spreadsheet, as always
	}
	if last == "" {
		var err error
		if last, err = e.shownByDefault(tab); err != nil {
			return err
		}
	}
	d, moved := aggregates.TabRouting(tab, last, target, now)
	ch.AddDecision(d)
	if !moved {
		return nil
	}
	stale, err := e.proj.UnsettledOf(last)
	for _, fx := range stale {
		if fx.Target.Tab != tab {
			continue
		}
		ad, derr := aggregates.DecideAbandon(fx, now)
		if derr != nil {
			return derr
		}
		ch.AddDecision(ad)
	}
	return err
}

// shownByDefault is the default target when effects were queued for tab
// there (the tab showed in the default spreadsheet before a route took
// it), else "".
func (e *Engine) shownByDefault(tab string) (string, error) {
	has, err := e.proj.TabHasEffects(e.sync.cfg.Name, tab)
	if err != nil || !has {
		return "", err
	}
	return e.sync.cfg.Name, nil
}
