package projector

import (
	"encoding/json"
	"slices"

	"github.com/hikoutei/hikoutei-go/events"
)

// SheetLayout is what the read model knows of a tab's layout after its
// last migration (sheet.layout_migrated): the header it shows and the
// retired columns on it.
type SheetLayout struct {
	Header  []string `json:"header"`
	Retired []string `json:"retired,omitempty"`
	Seq     uint64   `json:"seq"`
}

// layoutKey is the hk_meta key of a tab's layout.
func layoutKey(target, tab string) string { return "sheet_layout:" + target + "/" + tab }

// layoutMigrated projects sheet.layout_migrated: each row's new visible
// hash, the candidate-time row hashes of the rows it held (they follow
// the row), the renamed columns' shown state, and the tab's layout.
func (p *Projector) layoutMigrated(e *events.Event, x events.SheetLayoutMigrated) error {
	vis := p.conn.Prep(`UPDATE hk_visible_state SET hash = ?, revision = revision + 1, effect_id = '', seq = ? WHERE tab = ? AND anchor = ?`)
	cand := p.conn.Prep(`UPDATE hk_sheet_field_state SET candidate_row_hash = ? WHERE tab = ? AND anchor = ? AND candidate_row_hash = ?`)
	conf := p.conn.Prep(`UPDATE hk_conflicts SET visible_hash = ? WHERE tab = ? AND anchor = ? AND state = 'open' AND visible_hash = ?`)
	for _, r := range x.Rows {
		bindAll(vis, r.Hash, int64(e.Seq), x.Tab, r.Anchor)
		if err := run(vis); err != nil {
			return err
		}
		if r.Before == "" || r.After == "" {
			continue
		}
		bindAll(cand, r.After, x.Tab, r.Anchor, r.Before)
		bindAll(conf, r.After, x.Tab, r.Anchor, r.Before)
		if err := errorsOf(run(cand), run(conf)); err != nil {
			return err
		}
	}
	if err := p.renameShown(x.Tab, x.Renamed); err != nil {
		return err
	}
	return p.setLayout(e.Seq, x)
}

// renameShown moves the per-field sheet state of renamed columns to their
// new names.
func (p *Projector) renameShown(tab string, renamed []events.ColumnRename) error {
	mv := p.conn.Prep(`UPDATE OR IGNORE hk_sheet_field_state SET field = ? WHERE tab = ? AND field = ?`)
	rm := p.conn.Prep(`DELETE FROM hk_sheet_field_state WHERE tab = ? AND field = ?`)
	for _, r := range renamed {
		bindAll(mv, r.To, tab, r.From)
		bindAll(rm, tab, r.From)
		if err := errorsOf(run(mv), run(rm)); err != nil {
			return err
		}
	}
	return nil
}

// setLayout records the tab's header and its retired columns: those the
// migration retired and those retired before that the header still shows.
func (p *Projector) setLayout(seq uint64, x events.SheetLayoutMigrated) error {
	l := SheetLayout{Seq: seq}
	for _, c := range x.NewHeader {
		l.Header = append(l.Header, c.Header)
	}
	prev, err := p.SheetLayoutOf(x.Target, x.Tab)
	if err != nil {
		return err
	}
	for _, r := range prev.Retired {
		if slices.Contains(l.Header, r) {
			l.Retired = append(l.Retired, r)
		}
	}
	for _, r := range x.Retired {
		if !slices.Contains(l.Retired, r.Header) {
			l.Retired = append(l.Retired, r.Header)
		}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return p.setMeta(layoutKey(x.Target, x.Tab), string(b))
}

// SheetLayoutOf returns the layout recorded for tab of target (zero when
// the tab was never migrated).
func (p *Projector) SheetLayoutOf(target, tab string) (SheetLayout, error) {
	var l SheetLayout
	v, err := p.MetaValue(layoutKey(target, tab))
	if err != nil || v == "" {
		return l, err
	}
	return l, json.Unmarshal([]byte(v), &l)
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
