package engine

import (
	"maps"
	"slices"
	"sync"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// layoutState is what the engine knows of the layouts a tab may show:
// the layout of every declaration of the entities in the log's history,
// and the tabs that wait for their migration to the current one.
type layoutState struct {
	hist events.ShapeHistory
	eras []layoutEra // every declaration that lays out, oldest first

	mu      sync.Mutex      // guards pending and check (never held across I/O)
	pending map[string]bool // tabs known to show an older layout
	check   map[string]bool // tabs whose header drifted: an older layout, or a person's change?

	run sync.Mutex // one migration pass at a time (held across I/O; health never takes it)
}

// layoutEra is one declaration: its log sequence, registry and layout.
type layoutEra struct {
	seq    uint64
	reg    *Registry
	schema *layout.Schema
}

// newLayoutState lays out every declaration of hist (a declaration that
// cannot be laid out is skipped: no tab can show it).
func newLayoutState(hist events.ShapeHistory) *layoutState {
	l := &layoutState{hist: hist, pending: map[string]bool{}, check: map[string]bool{}}
	for _, era := range hist {
		reg, err := NewRegistry(era.Declared.Entities...)
		if err != nil {
			continue
		}
		if schema, err := layoutOf(reg, nil); err == nil {
			l.eras = append(l.eras, layoutEra{seq: era.Seq, reg: reg, schema: schema})
		}
	}
	return l
}

// changedAt is the log sequence of the last declaration that changed
// tab's layout from the one before it (0: never changed, or the tab is
// new in it: nothing showed an older layout of it).
func (l *layoutState) changedAt(tab string) uint64 {
	for i := len(l.eras) - 1; i > 0; i-- {
		cur, ok := l.eras[i].schema.Tab(tab)
		prev, had := l.eras[i-1].schema.Tab(tab)
		if !ok || !had {
			return 0
		}
		if !slices.Equal(cur.Headers(), prev.Headers()) || !sameKinds(cur, prev) {
			return l.eras[i].seq
		}
	}
	return 0
}

// olderAlike is the newest older declaration, from era since on, laying
// tab out with the current names but another meaning: other kinds (a
// retype), or a column that shows another field now (a field renamed away
// and back, dropped and added again) (-1: none). A declaration whose
// layout means the same as the current one is not an older layout.
func (l *layoutState) olderAlike(cur layout.TabSpec, since int) int {
	for i := len(l.eras) - 1; i >= max(since, 0); i-- {
		old, ok := l.eras[i].schema.Tab(cur.Name)
		if ok && slices.Equal(old.Headers(), cur.Headers()) && (!sameKinds(old, cur) || !l.sameFields(old, i)) {
			return i
		}
	}
	return -1
}

// sameFields reports whether every column of tab as declaration era laid
// it out shows, in the newest declaration, the field of its own name.
func (l *layoutState) sameFields(old layout.TabSpec, era int) bool {
	follow := l.follow(old.Entity, era)
	for _, c := range old.Columns {
		if name, ok := follow(c.Name); !ok || name != c.Name {
			return false
		}
	}
	return true
}

func sameKinds(a, b layout.TabSpec) bool {
	return slices.EqualFunc(a.Columns, b.Columns, func(x, y cell.Column) bool { return x.Kind == y.Kind })
}

// match finds the layout the header row shows: the current one (era -1)
// or the newest older declaration whose layout of tab it shows exactly.
// A header is only names: when it shows the current names while the tab
// waits for its migration (pending: it showed rows before its layout
// changed), the newest older layout with the same names and another
// meaning (olderAlike), from the declaration of the tab's last recorded
// migration on (since: its era, 0 for none), is the one it shows. A
// header of an older layout is, when it shows since's layout, that one:
// the layout the tab's last migration brought it to (a later declaration
// may lay it out under the same names with other kinds, a retype undone
// before the tab followed it); else the newest older layout it shows.
func (l *layoutState) match(cur *layout.Schema, tab string, header []any, pending bool, since int) (era int, spec layout.TabSpec, ok bool) {
	if spec, ok := cur.Tab(tab); ok {
		if _, ok := layout.MatchHeader(spec, header); ok {
			if i := l.olderAlike(spec, since); pending && i >= 0 {
				old, _ := l.eras[i].schema.Tab(tab)
				return i, old, true
			}
			return -1, spec, true
		}
	}
	if spec, ok := l.shows(tab, header, since); ok && since > 0 {
		return since, spec, true
	}
	for i := len(l.eras) - 1; i >= 0; i-- {
		if spec, ok := l.shows(tab, header, i); ok {
			if j := l.olderAlikeOf(tab, header, i, since); j >= 0 {
				spec, _ = l.eras[j].schema.Tab(tab)
				return j, spec, true
			}
			return i, spec, true
		}
	}
	return 0, layout.TabSpec{}, false
}

// olderAlikeOf is, for a header that shows declaration era's layout of
// tab by its names, the newest older declaration, from era since on,
// whose layout the header shows too with another meaning (-1: none): a
// tab no migration brought to era's layout (since is older) still shows
// that one, e.g. a field dropped then added again before the tab
// followed either change shows the dropped field's values, not the new
// field's (its column is filled from canonical state).
func (l *layoutState) olderAlikeOf(tab string, header []any, era, since int) int {
	cur, _ := l.eras[era].schema.Tab(tab)
	for j := era - 1; j >= max(since, 0); j-- {
		if old, ok := l.shows(tab, header, j); ok && (!sameKinds(old, cur) || !l.sameFieldsAs(old, j, era)) {
			return j
		}
	}
	return -1
}

// sameFieldsAs reports whether every column of tab as declaration era
// laid it out shows, in the newest declaration, the field the column of
// its name shows in declaration later.
func (l *layoutState) sameFieldsAs(old layout.TabSpec, era, later int) bool {
	from, to := l.follow(old.Entity, era), l.follow(old.Entity, later)
	for _, c := range old.Columns {
		a, okA := from(c.Name)
		b, okB := to(c.Name)
		if okA != okB || a != b {
			return false
		}
	}
	return true
}

// shows reports whether header shows declaration era's layout of tab
// (and that layout).
func (l *layoutState) shows(tab string, header []any, era int) (layout.TabSpec, bool) {
	if era < 0 || era >= len(l.eras) {
		return layout.TabSpec{}, false
	}
	spec, ok := l.eras[era].schema.Tab(tab)
	if !ok {
		return spec, false
	}
	_, ok = layout.MatchHeader(spec, header)
	return spec, ok
}

// follow maps a column of tab as declaration era laid it out to the name
// of the field it shows in the newest declaration: renames followed
// (schema.changed), false when a later declaration dropped it. The anchor
// is itself.
func (l *layoutState) follow(entity string, era int) func(string) (string, bool) {
	return func(col string) (string, bool) {
		if col == layout.AnchorHeader {
			return col, true
		}
		return l.hist.FieldName(entity, col, l.eras[era].seq)
	}
}

// olderShapes are the shapes the field of entity now named field had in
// the declarations before the newest one, renames followed.
func (l *layoutState) olderShapes(entity, field string) []events.FieldShape {
	var out []events.FieldShape
	for _, era := range l.eras[:max(len(l.eras)-1, 0)] {
		s, ok := era.reg.Shape(entity)
		if !ok {
			continue
		}
		for _, g := range s.Fields {
			if name, ok := l.hist.FieldName(entity, g.Name, era.seq); ok && name == field {
				out = append(out, g)
			}
		}
	}
	return out
}

// fieldShape is the shape of field of entity in declaration era (the key
// is a required string).
func (l *layoutState) fieldShape(era int, entity, field string) events.FieldShape {
	return shapeOf(l.eras[era].reg, entity, field)
}

// shapeOf is the shape of field of entity in reg (the key is a required
// string; an unknown field is a nullable string).
func shapeOf(reg *Registry, entity, field string) events.FieldShape {
	s, _ := reg.Shape(entity)
	if field == s.PK {
		return events.FieldShape{Name: field, Kind: events.KindString}
	}
	if f, ok := s.Field(field); ok {
		return f
	}
	return events.FieldShape{Name: field, Kind: events.KindString, Nullable: true}
}

// migrating is the set of tabs waiting for their migration (a copy; nil
// for a store without layouts). Health reads it: never waits on I/O.
func (l *layoutState) migrating() map[string]bool {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.pending)
}

// unexamined is the set of tabs whose drifted header the next pass
// examines (a copy): until it tells an older layout from a person's
// change, such a tab is not ok (an empty tab provisioned in an older
// layout has no row to mark it pending at Open), unless a header a
// person changed already blocks it. Health reads it: never waits on I/O.
func (l *layoutState) unexamined() map[string]bool {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.check)
}

// Migrating reports whether tab waits for its layout migration (the
// effects.Migrator the workers ask: they leave such a tab alone).
func (e *Engine) Migrating(tab string) bool {
	if e.lay == nil {
		return false
	}
	e.lay.mu.Lock()
	defer e.lay.mu.Unlock()
	return e.lay.pending[tab]
}

// toCheck notes tabs whose header drifted: the next migration pass reads
// their headers to tell an older layout from a person's change.
func (l *layoutState) toCheck(tabs ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range tabs {
		l.check[t] = true
	}
}

// setPending marks tab as waiting for its migration (or not).
func (l *layoutState) setPending(tab string, on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.check, tab)
	if on {
		l.pending[tab] = true
	} else {
		delete(l.pending, tab)
	}
}

// due lists the tabs a migration pass examines, sorted.
func (l *layoutState) due() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := slices.Collect(maps.Keys(l.pending))
	for t := range l.check {
		if !l.pending[t] {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// loadLayouts reads the layouts of the log's declarations and marks the
// tabs that, from local state, still show an older layout
// (layoutState.pendingFrom).
func (e *Engine) loadLayouts() error {
	if e.sync == nil {
		return nil
	}
	hist, err := events.ReadShapeHistory(e.Log())
	if err != nil {
		return err
	}
	e.lay = newLayoutState(hist)
	pending, err := e.lay.pendingFrom(e.entityTabs(),
		func(tab string) (uint64, error) {
			rec, err := e.proj.SheetLayoutOf(e.sheet.TargetOf(tab), tab)
			return rec.Seq, err
		}, e.proj.ShownBefore)
	for _, tab := range pending {
		e.lay.setPending(tab, true)
	}
	return err
}

// pendingFrom lists the tabs that, from local state, still show an older
// layout: the tab's layout changed at a declaration, it showed rows
// written before it, and no migration of it was recorded since
// (migrated: the log sequence of its last one, 0 for none).
func (l *layoutState) pendingFrom(tabs []string, migrated func(string) (uint64, error), shownBefore func(string, uint64) (bool, error)) ([]string, error) {
	var out []string
	for _, tab := range tabs {
		at := l.changedAt(tab)
		if at == 0 {
			continue
		}
		seq, err := migrated(tab)
		if err != nil || seq >= at {
			if err != nil {
				return out, err
			}
			continue
		}
		shown, err := shownBefore(tab, at)
		if err != nil {
			return out, err
		}
		if shown {
			out = append(out, tab)
		}
	}
	return out, nil
}

// readPending is pendingFrom for a tool reading a store's log and read
// model (no running store): the tabs of target waiting for their layout
// migration.
func readPending(conn *sqlite.Conn, hist events.ShapeHistory, target string) (map[string]bool, error) {
	l := newLayoutState(hist)
	if len(l.eras) == 0 {
		return nil, nil
	}
	layouts, err := projector.SheetLayouts(conn, target)
	if err != nil {
		return nil, err
	}
	var tabs []string
	for _, t := range l.eras[len(l.eras)-1].schema.Tabs() {
		if t.Role == layout.RoleSystem || t.Role == layout.RoleInput {
			tabs = append(tabs, t.Name)
		}
	}
	pending, err := l.pendingFrom(tabs, func(tab string) (uint64, error) { return layouts[tab].Seq, nil },
		func(tab string, seq uint64) (bool, error) { return projector.TabShownBefore(conn, tab, seq) })
	out := map[string]bool{}
	for _, t := range pending {
		out[t] = true
	}
	return out, err
}

// layouts is the engine as the workers' Migrator (nil without layouts).
func (e *Engine) layoutsOf(s *syncState) effects.Migrator {
	switch {
	case e.lay == nil:
		return nil
	case s != e.sync:
		return targetMigrator{e: e, s: s}
	}
	return e
}

// eraAt is the declaration in force at log sequence seq (the first one
// for an earlier seq).
func (l *layoutState) eraAt(seq uint64) int {
	i := 0
	for j, era := range l.eras {
		if era.seq <= seq {
			i = j
		}
	}
	return i
}

// translated is the values of fx as its tab's current layout names them:
// a value queued under an older declaration follows its field's renames
// and converts to the field's current kind; a value of a field that left
// the tab, was dropped since (even if a field of its name came back), or
// does not convert is left out, the anti-entropy pass
// writing canonical state there. An update left with nothing to write
// writes its key cell: a guarded write that changes nothing. An append
// (the row's first write) is completed from canonical state in the
// columns its older layout did not have or whose value did not convert,
// so a row is never appended with a blank where the record holds a
// value (no divergence for anti-entropy to find later).
func (e *Engine) translated(fx aggregates.Effect) (map[string]any, error) {
	spec, ok := e.sheet.Schema.Tab(fx.Target.Tab)
	if e.lay == nil || len(e.lay.eras) < 2 || fx.Values == nil || !ok || (spec.Role != layout.RoleSystem && spec.Role != layout.RoleInput) {
		return fx.Values, nil
	}
	era := e.lay.eraAt(fx.QueuedSeq)
	shape, _ := e.reg.Shape(spec.Entity)
	out := make(map[string]any, len(fx.Values))
	for k, v := range fx.Values {
		// Followed even when the layout shows a column of the same name:
		// a field dropped and added again is another field, and the
		// dropped one's value never lands in the new one's column.
		name, ok := e.lay.hist.FieldName(spec.Entity, k, fx.QueuedSeq)
		if i := spec.ColumnIndex(name); !ok || i < 0 || i == spec.Anchor {
			continue
		}
		conv, err := convertShown(v, e.lay.fieldShape(era, spec.Entity, k), shapeOf(e.reg, spec.Entity, name))
		if err == nil {
			out[name] = conv
		}
	}
	switch fx.Op {
	case events.OpUpdate:
		if len(out) == 0 {
			out[shape.PK] = fx.EntityID
		}
	case events.OpAppend:
		return out, e.completeAppend(spec, fx.EntityID, out)
	}
	return out, nil
}

// completeAppend fills the columns of spec that values lacks with the
// record's canonical values (a record removed since keeps what it has: its
// delete follows).
func (e *Engine) completeAppend(spec layout.TabSpec, id string, values map[string]any) error {
	var missing []string
	for i, c := range spec.Columns {
		if _, ok := values[c.Name]; !ok && i != spec.Anchor {
			missing = append(missing, c.Name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	canonical, exists, err := e.proj.EntityValues(spec.Entity, id)
	if err != nil || !exists {
		return err
	}
	for _, name := range missing {
		if v, ok := canonical[name]; ok {
			values[name] = v
		}
	}
	return nil
}
