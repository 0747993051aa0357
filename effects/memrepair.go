package effects

import (
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// RepairBase implements Outbox.RepairBase: the sequence of the last event
// appended.
func (m *MemOutbox) RepairBase() (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.log)), nil
}

// Repair implements Outbox.Repair with aggregates.DecideRepair over the
// MemOutbox's visible state and entities. It holds no conflicts or
// quarantine, so no row is held and a missing Input row is restored only
// when its tab was recreated.
func (m *MemOutbox) Repair(spreadsheet string, base uint64, seen aggregates.SeenTab) (aggregates.RepairReport, error) {
	var rep aggregates.RepairReport
	m.mu.Lock()
	defer m.mu.Unlock()
	spec, ok := m.cfg.Schema.Tab(seen.Tab)
	if spreadsheet != m.cfg.Spreadsheet || !ok || (spec.Role != layout.RoleSystem && spec.Role != layout.RoleInput) {
		return rep, nil
	}
	expected, inFlight := m.tabState(spreadsheet, seen.Tab, base)
	observed, copies := seen.Index()
	p := aggregates.TabPolicy{Input: spec.Role == layout.RoleInput, Restore: seen.Recreated, Columns: m.sheet.Columns(seen.Tab)}
	var ch aggregates.Changes
	for _, anchor := range aggregates.Anchors(expected, observed) {
		ent := m.entities[events.EntityStream(spec.Entity, anchor)]
		r := aggregates.RepairRow{Target: m.sheet.Target(seen.Tab, anchor), Entity: spec.Entity, ID: anchor,
			Expected: expected[anchor], Observed: observed[anchor], InFlight: inFlight[anchor]}
		r.Copies, r.CopyHashes = aggregates.SeenCopies(observed, copies, anchor)
		if ent != nil && ent.state.Exists {
			r.Exists, r.Values = true, ent.values
		}
		q, d, write := aggregates.DecideRepair(r, p)
		rep.Count(d)
		if write {
			ch.Queue, rep.Queued = append(ch.Queue, q), rep.Queued+1
		}
	}
	return rep, m.appendChanges(ch, m.Now(), nil)
}

// tabState is what the MemOutbox says tab shows: the visible hash of each
// anchor an applied write reached, and the anchors in transition for a
// read at base: with unsettled effects, or written after base.
func (m *MemOutbox) tabState(spreadsheet, tab string, base uint64) (map[string]string, map[string]bool) {
	expected, inFlight := map[string]string{}, map[string]bool{}
	for _, id := range m.queue {
		fx := m.fx[id]
		if fx.Target.Spreadsheet != spreadsheet || fx.Target.Tab != tab {
			continue
		}
		if h := m.visible[fx.Target.Binding]; h != "" {
			expected[fx.Target.Anchor] = h
		}
		if !fx.State.Settled() || m.written[fx.Target.Binding] > base {
			inFlight[fx.Target.Anchor] = true
		}
	}
	return expected, inFlight
}
