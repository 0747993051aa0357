package projector

import (
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// hk_meta keys: the sync target the outbox serves, and the log sequence
// of the last switch to it.
const (
	metaSyncTarget  = "sync_target"
	metaTargetSince = "sync_target_since"
	// per tab, once routes send entities to other spreadsheets: the
	// target that shows the tab, and the log sequence of its last move
	metaTabTarget = "sync_tab_target/"
	metaTabSince  = "sync_tab_since/"
)

// targetBound records the bound target; adopted legacy targets' effects
// move to it (they were queued for the same spreadsheet).
func (p *Projector) targetBound(seq uint64, x events.SyncTargetBound) error {
	p.written.forget(seq) // what counts as told moves: the next search reads every entity
	if x.Adopted != "" {
		if err := p.exec("UPDATE hk_outbox SET spreadsheet = ? WHERE spreadsheet = ?", x.Target, x.Adopted); err != nil {
			return err
		}
	}
	if x.Previous != "" {
		if err := p.switched(seq); err != nil {
			return err
		}
	}
	return p.setMeta(metaSyncTarget, x.Target)
}

// tabRouted records the target that shows a tab; a move forgets what
// the previous target showed of it, as switched does for every tab, and
// only effects queued from now on count as having told the new target
// about a row of it (it is backfilled completely).
func (p *Projector) tabRouted(seq uint64, x events.SyncTabRouted) error {
	p.written.forget(seq) // what counts as told moves: the next search reads every entity
	if x.Previous != "" && x.Previous != x.Target {
		for _, q := range []string{"DELETE FROM hk_visible_state WHERE tab = ?", "DELETE FROM hk_migrated_rows WHERE tab = ?",
			"UPDATE hk_sheet_field_state SET shown_hash = NULL, shown_seq = NULL WHERE tab = ?"} {
			if err := p.exec(q, x.Tab); err != nil {
				return err
			}
		}
		if err := p.setMeta(metaTabSince+x.Tab, strconv.FormatUint(seq, 10)); err != nil {
			return err
		}
	}
	return p.setMeta(metaTabTarget+x.Tab, x.Target)
}

// TabTarget is the sync target a sync.tab_routed last named for tab (""
// = none recorded: the tab was never routed).
func (p *Projector) TabTarget(tab string) (string, error) { return p.MetaValue(metaTabTarget + tab) }

// TabTargets is TabTarget of every tab a sync.tab_routed named, in one
// read (empty: no tab was ever routed).
func (p *Projector) TabTargets() (map[string]string, error) {
	out := map[string]string{}
	// the keys after the prefix: '/' + 1 is '0'
	after := metaTabTarget[:len(metaTabTarget)-1] + "0"
	err := sqlitex.Execute(p.conn, "SELECT key, value FROM hk_meta WHERE key > ? AND key < ?", &sqlitex.ExecOptions{
		Args: []any{metaTabTarget, after},
		ResultFunc: func(s *sqlite.Stmt) error {
			out[strings.TrimPrefix(s.ColumnText(0), metaTabTarget)] = s.ColumnText(1)
			return nil
		}})
	if err != nil {
		return nil, invalid(err)
	}
	return out, nil
}

// switched forgets what the previous spreadsheet showed: nothing of the
// new one is known until a write of this binding lands (so its cells are
// never read as a person's edits), and only effects queued from now on
// count as having told it about a row (it is backfilled completely).
func (p *Projector) switched(seq uint64) error {
	for _, q := range []string{"DELETE FROM hk_visible_state", "DELETE FROM hk_migrated_rows",
		"UPDATE hk_sheet_field_state SET shown_hash = NULL, shown_seq = NULL"} {
		if err := p.exec(q); err != nil {
			return err
		}
	}
	return p.setMeta(metaTargetSince, strconv.FormatUint(seq, 10))
}

// targetSince is the log sequence of the last switch of spreadsheet (0:
// never switched): effects queued before it told another spreadsheet.
func (p *Projector) targetSince() (int64, error) { return p.metaSeq(metaTargetSince) }

// tabSince is targetSince for tab: the later of the last switch and the
// tab's last move to another target.
func (p *Projector) tabSince(since int64, tab string) (int64, error) {
	moved, err := p.metaSeq(metaTabSince + tab)
	return max(since, moved), err
}

// metaSeq is the log sequence hk_meta holds under key (0: none).
func (p *Projector) metaSeq(key string) (int64, error) {
	v, err := p.MetaValue(key)
	if err != nil || v == "" {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
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

// TabHasEffects reports whether any effect was queued for tab of target.
func (p *Projector) TabHasEffects(target, tab string) (bool, error) {
	found := false
	err := p.each("SELECT 1 FROM hk_outbox WHERE tab = ? AND spreadsheet = ? LIMIT 1", []any{tab, target}, func(*sqlite.Stmt) {
		found = true
	})
	return found, err
}
