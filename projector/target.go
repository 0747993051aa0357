package projector

import (
	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// metaSyncTarget is the hk_meta key of the sync target the outbox serves.
const metaSyncTarget = "sync_target"

// targetBound records the bound target; adopted legacy targets' effects
// move to it (they were queued for the same spreadsheet).
func (p *Projector) targetBound(x events.SyncTargetBound) error {
	if x.Adopted != "" {
		if err := p.exec("UPDATE hk_outbox SET spreadsheet = ? WHERE spreadsheet = ?", x.Target, x.Adopted); err != nil {
			return err
		}
	}
	return p.setMeta(metaSyncTarget, x.Target)
}

// BoundTarget returns the sync target the outbox serves ("" = none
// recorded yet: a new store, or one from before targets were keyed by
// spreadsheet).
func (p *Projector) BoundTarget() (string, error) { return p.MetaValue(metaSyncTarget) }

// OutboxTargets lists the distinct sync targets effects were queued for.
func (p *Projector) OutboxTargets() ([]string, error) {
	var out []string
	err := p.each("SELECT DISTINCT spreadsheet FROM hk_outbox ORDER BY spreadsheet", nil, func(st *sqlite.Stmt) {
		out = append(out, st.ColumnText(0))
	})
	return out, err
}

// UnsettledOf returns every effect of target that still holds its row's
// stream (I07), oldest first.
func (p *Projector) UnsettledOf(target string) ([]aggregates.Effect, error) {
	return p.queryEffects(`SELECT `+outboxColsNoPayload+` FROM hk_outbox WHERE spreadsheet = ? AND state IN `+unsettled+`
ORDER BY queued_seq`, target)
}
