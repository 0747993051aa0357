package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// pollOld polls an Input tab under the layout it still shows (old, of
// declaration era) before its migration: a person's edit made against
// that layout is decided like any edit (accepted, conflict, quarantine)
// under the current field it shows, never lost nor read as another
// column. A column whose field is gone or no longer editable is not
// read as an edit: the migration keeps its unimported cells retired.
func (e *Engine) pollOld(ctx context.Context, wb *sheetsio.Workbook, tab string, era int, old layout.TabSpec) error {
	ow := sheetsio.OpenWorkbook(wb.SpreadsheetID(), wb.Schema().WithTab(old), wb.SheetIDs())
	p, err := effects.NewPoller(effects.PollerConfig{Provider: e.sync.cfg.Provider, Workbook: ow, Inbound: oldInbound{e: e, view: e.oldView(tab, era, old)},
		Tabs: []string{tab}, Clock: e.cfg.Clock, Logger: e.log})
	if err != nil {
		return err
	}
	_, err = p.Poll(ctx)
	return err
}

// oldView reads tab in the old layout of declaration era: the user
// fields it shows that people still edit, by their current names, each
// value converted to the field's current kind (a value that does not
// convert is quarantined as a type mismatch, like a cell the column
// cannot hold).
func (e *Engine) oldView(tab string, era int, old layout.TabSpec) tabView {
	cur := e.currentView(tab)
	follow := e.lay.follow(old.Entity, era)
	v := tabView{spec: old}
	names := map[string]string{} // old column → current field, for the columns read
	for _, c := range old.Columns {
		name, ok := follow(c.Name)
		switch {
		case !ok || c.Name == layout.AnchorHeader:
		case c.Key && cur.spec.ColumnIndex(name) >= 0:
			names[c.Name] = name
		case slices.Contains(cur.user, name):
			names[c.Name], v.user = name, append(v.user, name)
		}
	}
	v.translate = func(g *aggregates.GridRow) { e.translateRow(g, era, old.Entity, names) }
	return v
}

// translateRow rewrites a row decoded in an old layout into the current
// fields: renamed, converted to their current kind, the others left out.
func (e *Engine) translateRow(g *aggregates.GridRow, era int, entity string, names map[string]string) {
	out := make(map[string]any, len(names))
	for col, v := range g.Values {
		name, ok := names[col]
		if !ok {
			continue
		}
		conv, err := convertShown(v, e.lay.fieldShape(era, entity, col), shapeOf(e.reg, entity, name))
		if err != nil {
			g.Malformed, g.Values = &aggregates.CellError{Column: col, Reason: cell.ReasonTypeMismatch}, nil
			return
		}
		out[name] = conv
	}
	g.Values = out
}

// convertShown converts a value between field shapes (events.ConvertValue);
// a blank stays blank and a value already of the target kind stays as it
// is.
func convertShown(v any, from, to events.FieldShape) (any, error) {
	if v == nil || isKind(v, to.Kind) {
		return v, nil
	}
	from.Nullable, to.Nullable = true, true
	out, err := events.ConvertValue(v, from, to)
	if errors.Is(err, events.ErrValueNotConvertible) {
		return nil, err
	}
	return out, err
}

// oldInbound is the store side of the poll of a tab in an old layout:
// the engine's, with the tab read through its old view; it watches no
// conflict choice and cleans nothing up.
type oldInbound struct {
	e    *Engine
	view tabView
}

func (o oldInbound) Expectations(tabs []string) (map[string]aggregates.TabExpectation, uint64, error) {
	return o.e.Expectations(tabs)
}

func (o oldInbound) Observe(base uint64, tabs map[string]effects.TabObservation, full bool) (aggregates.ObserveStats, error) {
	return o.e.observeIn(func(string) tabView { return o.view }, base, tabs, full)
}

func (oldInbound) Cleanup(uint64, map[string]*sheetsio.GridSnapshot) (int, error) { return 0, nil }

func (oldInbound) WatchesChoices() (bool, error) { return false, nil }

func (oldInbound) Choose(uint64, map[string][]aggregates.SheetChoice) (map[aggregates.ChoiceOutcome]int, error) {
	return nil, nil
}

// isKind reports whether v is a canonical value of kind k.
func isKind(v any, k events.Kind) bool {
	switch v.(type) {
	case string:
		return k == events.KindString
	case int64:
		return k == events.KindInt
	case float64:
		return k == events.KindFloat
	case bool:
		return k == events.KindBool
	case time.Time:
		return k == events.KindTime
	}
	return false
}
