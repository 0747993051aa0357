package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The engine brings the sheet to the current layout (effects.Migrator).
var _ effects.Migrator = (*Engine)(nil)

// MigrateLayouts implements effects.Migrator: it reads the header of
// every tab waiting for a migration or whose header drifted (one read),
// then migrates, in turn, each tab whose header shows the layout of an
// older declaration of the entities: an Input tab is polled under its
// old layout first (people's edits made against it are decided as
// edits, conflicts or quarantine), then the tab changes in one fenced
// batchUpdate (sheetsio.Client.MigrateTab) and the store records it
// (sheet.layout_migrated) with every row's new visible hash. A header
// that shows no layout the store ever declared stays blocked
// (sheet_header_drift). A tab whose writes are in flight waits for them.
// It returns the tabs migrated; it stops at the first error (the other
// tabs wait for the next pass).
func (e *Engine) MigrateLayouts(ctx context.Context) ([]string, error) {
	if e.lay == nil || e.sync == nil {
		return nil, nil
	}
	return e.migrateLayoutsOf(ctx, e.sync)
}

// migrateLayoutsOf is MigrateLayouts for the tabs target s shows.
func (e *Engine) migrateLayoutsOf(ctx context.Context, s *syncState) ([]string, error) {
	tabs := slices.DeleteFunc(e.lay.due(), func(tab string) bool { return e.sheet.TargetOf(tab) != s.cfg.Name })
	s.mu.Lock()
	wb := s.workbook
	s.mu.Unlock()
	if len(tabs) == 0 || wb == nil {
		return nil, nil
	}
	e.lay.run.Lock()
	defer e.lay.run.Unlock()
	heads, err := e.sync.cfg.Provider.ReadHeaders(ctx, wb, tabs...)
	if err != nil {
		return nil, err
	}
	var done []string
	for _, tab := range tabs {
		ok, err := e.migrateTab(ctx, wb, tab, heads)
		if err != nil {
			return done, fmt.Errorf("migrate the layout of tab %s: %w", tab, err)
		}
		if ok {
			done = append(done, tab)
		}
	}
	return done, nil
}

// migrateTab decides what tab's header shows and migrates it when it is
// an older layout. ok reports a migration recorded.
func (e *Engine) migrateTab(ctx context.Context, wb *sheetsio.Workbook, tab string, heads map[string][]any) (bool, error) {
	header, present := heads[tab]
	since, err := e.migratedEra(tab)
	if err != nil {
		return false, err
	}
	era, old, ok := e.lay.match(e.sheet.Schema, tab, header, e.Migrating(tab), since)
	switch {
	case !present || !slices.ContainsFunc(header, func(h any) bool { return !blankCell(h) }):
		e.lay.setPending(tab, false) // deleted or emptied: reprovisioning creates it again in the current layout
		return false, nil
	case !ok:
		e.lay.setPending(tab, false)
		e.notes.noteBlocked(e.sheet.TargetOf(tab), tab, ReasonHeaderDrift, e.cfg.Clock.Now())
		e.log.Warn("a tab's header shows no layout the store declared; the tab stays blocked until its header is repaired", "tab", tab)
		return false, nil
	case era < 0 && !e.Migrating(tab):
		e.lay.setPending(tab, false) // the current layout: nothing to do
		return false, nil
	}
	e.lay.setPending(tab, true)
	if sending, err := e.tabSending(tab); err != nil || sending {
		return false, err // its writes in flight settle first (a probe reads the old layout's receipts)
	}
	if era < 0 {
		return e.recoverTab(ctx, wb, tab, header)
	}
	if old.Role == layout.RoleInput && effects.Editable(old) {
		if err := e.pollOld(ctx, wb, tab, era, old); err != nil {
			return false, err
		}
	}
	return e.migrateLayout(ctx, wb, tab, era, old, header)
}

// migratedEra is the declaration tab was brought to by its last recorded
// layout migration (0: none recorded): the tab shows no older layout.
func (e *Engine) migratedEra(tab string) (int, error) {
	var seq uint64
	err := e.onWriter(func() error {
		rec, err := e.proj.SheetLayoutOf(e.sheet.TargetOf(tab), tab)
		seq = rec.Seq
		return err
	})
	if err != nil || seq == 0 {
		return 0, err
	}
	return e.lay.eraAt(seq), nil
}

// tabSending reports whether effects on tab are being sent or uncertain.
func (e *Engine) tabSending(tab string) (bool, error) {
	var sending bool
	err := e.onWriter(func() (err error) {
		sending, err = e.proj.TabSending(e.sheet.TargetOf(tab), tab)
		return err
	})
	return sending, err
}

// migrateLayout runs one tab's migration and records it.
func (e *Engine) migrateLayout(ctx context.Context, wb *sheetsio.Workbook, tab string, era int, old layout.TabSpec, header []any) (bool, error) {
	if err := e.Renew(); err != nil {
		return false, fmt.Errorf("%w: %w", effects.ErrDisplaced, err)
	}
	fence := e.Fence()
	var d *layoutMigration
	m := sheetsio.TabMigration{Tab: tab, Old: old, Fence: &fence, BeforeWrite: e.writeGuard,
		Plan: func(snap *sheetsio.TabSnapshot) (plan sheetsio.MigrationPlan, err error) {
			plan, d, err = e.planMigration(tab, era, old, snap)
			return plan, err
		}}
	res, err := e.sync.cfg.Provider.MigrateTab(ctx, wb, m)
	if err != nil {
		return false, err
	}
	// The tab shows the current layout; the store does not know it yet: a
	// restart finds the tab migrated while it still waits (recoverTab).
	failpoint.Inject(failpoint.LayoutAfterSheetMigrate)
	if err := e.recordMigration(d.event(e.sheet.TargetOf(tab), header, res), len(d.plan.Retire)); err != nil {
		return false, err
	}
	e.headerAfter(tab, res.HeaderAfter)
	return true, nil
}

// headerAfter checks the header row the migration's own response showed:
// a header cell a person changed between the read and the write (the
// migration writes only the cells it changes) blocks the tab at once, as
// any header a person changed (sheet_header_drift).
func (e *Engine) headerAfter(tab string, header []any) {
	cur, ok := e.sheet.Schema.Tab(tab)
	if header == nil || !ok {
		return
	}
	if _, err := sheetsio.CheckHeader(cur, header); err != nil {
		e.lay.toCheck(tab)
		e.notes.noteBlocked(e.sheet.TargetOf(tab), tab, ReasonHeaderDrift, e.cfg.Clock.Now())
		e.log.Warn("a person changed a tab's header while its layout migrated; the tab stays blocked until its header is repaired", "tab", tab)
	}
}

// recordMigration commits sheet.layout_migrated; the tab is then read
// in the current layout, its rows' evidence examined again
// (aggregates.Reexamined).
func (e *Engine) recordMigration(ev events.SheetLayoutMigrated, retired int) error {
	err := e.onWriter(func() error {
		now := e.cfg.Clock.Now()
		var ch aggregates.Changes
		stream := events.SyncStream(ev.Target)
		for _, part := range migrationParts(ev) {
			ch.Add(stream, events.AnyVersion, events.New(stream, part, now))
		}
		if err := e.reexamine(&ch, ev.Tab, now); err != nil {
			return err
		}
		return e.commitWorker(ch, now)
	})
	if err != nil {
		return err
	}
	e.lay.setPending(ev.Tab, false)
	if err := e.noteMigratedRows(ev); err != nil {
		return err
	}
	e.log.Info("a sheet tab follows the entities' new shape", "tab", ev.Tab, "rows", len(ev.Rows), "retired_columns", retired,
		"recovered", ev.Recovered)
	return nil
}

// noteMigratedRows tells health the rows of live records the migration
// left differing from canonical state (a person's cell not decided yet,
// a cell the migration could not fill) that no conflict or quarantine
// holds (the migration cleared their quarantine): they wait for the next
// poll. Until a reconciliation pass counts the tab again, the tab is
// diverged, never ok while it shows them. This note is in memory; the
// event marks the same rows (MigratedRow.Differs), which the read model
// keeps for health after a restart.
func (e *Engine) noteMigratedRows(ev events.SheetLayoutMigrated) error {
	if !slices.ContainsFunc(ev.Rows, func(r events.MigratedRow) bool { return r.Differs }) {
		return nil
	}
	var rows projector.TabRows
	err := e.onWriter(func() (err error) {
		rows, err = e.proj.TabRowsOf(ev.Target, ev.Tab, e.proj.Checkpoint()) // no read to be newer than
		return err
	})
	if err != nil {
		return err
	}
	e.notes.noteMigrated(ev.Target, ev.Tab, migratedDiffering(ev.Rows, rows), e.cfg.Clock.Now())
	return nil
}

// migratedDiffering counts the rows noteMigratedRows reports: of a live
// record, not held, and left differing by the migration (After), or kept
// showing the store's last write while canonical state moved on with no
// write in flight (no write carried it there: say, a field the tab's
// layout left and took back before the tab followed). The migration
// decided which rows differ (MigratedRow.Differs); the read model counts
// the same rows for health after a restart (projector.TabSyncFacts.Migrated).
func migratedDiffering(part []events.MigratedRow, rows projector.TabRows) int {
	n := 0
	for _, r := range part {
		if r.Differs && !rows.Held[r.Anchor] && (r.After != "" || !rows.InFlight[r.Anchor]) {
			n++
		}
	}
	return n
}

// reexamine adds to ch the clearing of tab's active row evidence
// (aggregates.Reexamined), guarded by the tab's inbound stream version.
func (e *Engine) reexamine(ch *aggregates.Changes, tab string, now time.Time) error {
	active, err := e.proj.ActiveQuarantine(tab)
	if err != nil || len(active) == 0 {
		return err
	}
	stream := events.InboundStream(tab)
	version, err := e.writer().Log().StreamVersion(stream)
	if err != nil {
		return err
	}
	for _, c := range aggregates.Reexamined(active) {
		ch.Add(stream, version, events.New(stream, c, now))
	}
	return nil
}

// migrationRowsPerEvent bounds the rows one sheet.layout_migrated lists
// (about 1.5 MB): a larger tab's migration is recorded as several events
// of one unit, in row order, the first carrying the retired and renamed
// columns.
const migrationRowsPerEvent = 20000

// migrationParts splits ev into the events that record it.
func migrationParts(ev events.SheetLayoutMigrated) []events.SheetLayoutMigrated {
	rows := ev.Rows
	var out []events.SheetLayoutMigrated
	for len(out) == 0 || len(rows) > 0 {
		part := ev
		part.Rows = rows[:min(len(rows), migrationRowsPerEvent)]
		rows = rows[len(part.Rows):]
		if len(out) > 0 {
			part.Retired, part.Renamed = nil, nil
		}
		out = append(out, part)
	}
	return out
}

// recoverTab records the migration of a tab found already in the current
// layout while the store still waited for it (the batchUpdate landed,
// its response was lost): each row it shows is expected to show
// canonical state; a row that does not is corrected as any other.
func (e *Engine) recoverTab(ctx context.Context, wb *sheetsio.Workbook, tab string, header []any) (bool, error) {
	snaps, err := e.sync.cfg.Provider.SnapshotKnown(ctx, wb, tab)
	if err != nil {
		return false, err
	}
	snap := snaps[tab]
	if snap.Err != nil {
		return false, snap.Err
	}
	ev := events.SheetLayoutMigrated{Target: e.sheet.TargetOf(tab), Tab: tab, OldHeader: columnsOf(header), NewHeader: columnsOf(header),
		Recovered: true}
	err = e.onWriter(func() error {
		ev.Rows, err = e.recoveredRows(tab, snap)
		return err
	})
	if err != nil {
		return false, err
	}
	return true, e.recordMigration(ev, 0)
}

// recoveredRows are the rows of a recovered tab: a row that shows exactly
// what the store last showed on it keeps that hash; any other is expected
// to show canonical state; the guards of writes queued before follow them,
// unless the row shows a value the store did not write (an Input row
// holding a person's edit no poll read: unknownCell). Such a row is
// recorded as read before (Before is its hash now), so a write guarded by
// the store's last row still fails on it and a poll decides the edit: a
// guard moved to the row as it shows would let the write overwrite the
// edit. A row of a record that no longer exists has no canonical state:
// it keeps the store's last write's hash, which it does not show, so its
// delete (and the surplus-row cleanup) never takes a person's cell with
// it (I21).
func (e *Engine) recoveredRows(tab string, snap *sheetsio.TabSnapshot) ([]events.MigratedRow, error) {
	spec, _ := e.sheet.Schema.Tab(tab)
	x, err := e.proj.TabExpectation(tab)
	if err != nil {
		return nil, err
	}
	var out []events.MigratedRow
	for _, r := range snap.Rows {
		before, shown := x.Rows[r.Anchor]
		if r.Anchor == "" || !shown {
			continue
		}
		vals, exists, err := e.proj.EntityValues(spec.Entity, r.Anchor)
		if err != nil {
			return nil, err
		}
		row := events.MigratedRow{Anchor: r.Anchor, Hash: r.Hash, Before: before}
		h := ""
		if exists {
			h = e.canonicalHash(spec, e.sheet.Columns(tab), r.Anchor, vals)
		}
		if r.Hash == before || (spec.Role == layout.RoleSystem && x.InFlight[r.Anchor]) {
			// The row shows exactly what the store last showed on it (the
			// layout means the same, or the migration left its cells as
			// they were), or it is a System row the store's queued writes
			// bring to canonical state: they are guarded by what it shows.
			row.Differs = differs(row, h)
			out = append(out, row)
			continue
		}
		if spec.Role == layout.RoleInput {
			unknown, err := e.unknownCell(spec, r, vals)
			if err != nil {
				return nil, err
			}
			if unknown {
				row.Before = r.Hash // nothing follows: the guards stay on the store's last row
			}
		}
		canonical := h
		if !exists {
			h = before
		}
		if h != "" && h != r.Hash {
			row.Hash, row.After = h, r.Hash
		}
		row.Differs = differs(row, canonical)
		out = append(out, row)
	}
	return out, nil
}

// unknownCell reports whether row r of an Input tab (in its current
// layout spec) shows, in a column other than the anchor, a value the store
// did not write: neither canonical state (vals) nor the value the store
// last knew the cell to show (written or accepted).
func (e *Engine) unknownCell(spec layout.TabSpec, r sheetsio.Row, vals map[string]any) (bool, error) {
	for i, c := range spec.Columns {
		if i == spec.Anchor || showsValue(c, r.Cells[i], vals[c.Name]) {
			continue
		}
		known, err := e.cellKnown(spec, c.Name, r)
		if err != nil || !known {
			return true, err
		}
	}
	return false, nil
}

// showsValue reports whether a cell of column c shows the value v.
func showsValue(c cell.Column, raw, v any) bool {
	got, err := cell.Decode(c, raw)
	if err != nil {
		return false
	}
	a, err := aggregates.ShownHash(got)
	if err != nil {
		return false
	}
	b, err := aggregates.ShownHash(v)
	return err == nil && a == b
}

// columnsOf is a header row as the event records it (trailing blank
// cells left out).
func columnsOf(header []any) []events.SheetColumn {
	out := make([]events.SheetColumn, 0, len(header))
	for _, h := range header {
		s, _ := h.(string)
		out = append(out, events.SheetColumn{Header: s})
	}
	for len(out) > 0 && out[len(out)-1].Header == "" {
		out = out[:len(out)-1]
	}
	return out
}

// layoutMigration is what the plan of one tab's migration decided, for
// its event.
type layoutMigration struct {
	tab       string
	plan      layout.ColumnPlan
	visible   map[string]string            // anchor → the row's visible hash before (the rows the store shows)
	same      map[string]bool              // rows that showed exactly what the store wrote or accepted
	canonical map[string]string            // anchor → the hash of canonical state in the current layout
	retired   map[string]int64             // a leaving column → its cells holding a value never imported
	shown     map[string]map[string]string // Input: anchor → field → hash of the value written
}

// event is the sheet.layout_migrated of the migration that res reports.
func (d *layoutMigration) event(target string, header []any, res *sheetsio.MigrationResult) events.SheetLayoutMigrated {
	ev := events.SheetLayoutMigrated{Target: target, Tab: d.tab, OldHeader: columnsOf(header)}
	for _, h := range res.Header {
		ev.NewHeader = append(ev.NewHeader, events.SheetColumn{Header: h})
	}
	for i, name := range d.plan.Retire {
		ev.Retired = append(ev.Retired, events.RetiredColumn{Field: name, Header: d.plan.RetiredAs[i], Cells: d.retired[name]})
	}
	for i, src := range d.plan.Source {
		if to := d.plan.New.Columns[i].Name; src != "" && src != to {
			ev.Renamed = append(ev.Renamed, events.ColumnRename{From: src, To: to})
		}
	}
	ev.Rows = d.rows(res.Rows)
	return ev
}

// rows decides each shown row's new visible hash: a row that showed
// exactly the store's last write now shows it in the current layout (the
// hash the migration left); any other (a person's cell not imported yet,
// a held conflict, a second copy) is expected to show canonical state, so
// what differs is still seen as differing. A row of a record that no
// longer exists (a migration moved it to another key, or it was removed)
// has no canonical state: it keeps the hash of the store's last write in
// the old layout, which no row in the new one shows, so its delete (and
// the surplus-row cleanup) never takes a person's cell with it (I21).
func (d *layoutMigration) rows(read []sheetsio.MigratedRow) []events.MigratedRow {
	copies := map[string]int{}
	for _, r := range read {
		copies[r.Anchor]++
	}
	var out []events.MigratedRow
	seen := map[string]bool{}
	for _, r := range read {
		if _, shown := d.visible[r.Anchor]; !shown || seen[r.Anchor] {
			continue
		}
		seen[r.Anchor] = true
		row := events.MigratedRow{Anchor: r.Anchor, Hash: r.After, Before: r.Before, Shown: d.shown[r.Anchor]}
		if !d.same[r.Anchor] || copies[r.Anchor] > 1 {
			h := d.canonical[r.Anchor]
			if h == "" {
				h = d.visible[r.Anchor]
			}
			if h != "" && h != r.After {
				row.Hash, row.After = h, r.After
			}
		}
		row.Differs = differs(row, d.canonical[r.Anchor])
		out = append(out, row)
	}
	return out
}

// differs reports whether a migrated row of a live record (canonical: the
// hash of its canonical state in the current layout, "" when it has none)
// is left differing from canonical state: it shows cells the store did
// not write (After), or the store's last write while canonical state
// moved on.
func differs(row events.MigratedRow, canonical string) bool {
	return canonical != "" && (row.After != "" || row.Hash != canonical)
}

// planMigration decides one tab's migration from the tab as read under
// its old layout: the column plan (a column people edited that leaves the
// tab is kept retired when a cell holds a value never imported), the
// values written (canonical state of the columns new to the tab or
// retyped; a retyped cell people changed keeps their value), and what the
// event needs. It reads the read model on the writer goroutine, a chunk of
// rows at a time, so commits are not held up by a large tab.
func (e *Engine) planMigration(tab string, era int, old layout.TabSpec, snap *sheetsio.TabSnapshot) (sheetsio.MigrationPlan, *layoutMigration, error) {
	var d *layoutMigration
	err := e.onWriter(func() (err error) {
		d, err = e.planColumns(tab, era, old, snap)
		return err
	})
	if err != nil {
		return sheetsio.MigrationPlan{}, nil, err
	}
	plan := sheetsio.MigrationPlan{Columns: d.plan, Fill: map[string]map[string]any{}}
	for from := 0; from < len(snap.Rows); from += planChunk {
		rows := snap.Rows[from:min(from+planChunk, len(snap.Rows))]
		if err := e.onWriter(func() error { return e.planRows(d, plan.Fill, rows) }); err != nil {
			return plan, nil, err
		}
	}
	return plan, d, nil
}

// planChunk is how many rows one step of a migration's plan reads.
const planChunk = 2000

// planColumns reads the tab's visible state and decides its column plan.
func (e *Engine) planColumns(tab string, era int, old layout.TabSpec, snap *sheetsio.TabSnapshot) (*layoutMigration, error) {
	cur, _ := e.sheet.Schema.Tab(tab)
	x, err := e.proj.TabExpectation(tab)
	if err != nil {
		return nil, err
	}
	d := &layoutMigration{tab: tab, visible: x.Rows, same: map[string]bool{}, canonical: map[string]string{},
		shown: map[string]map[string]string{}}
	follow := e.lay.follow(cur.Entity, era)
	if d.retired, err = e.unimported(old, cur, follow, snap); err != nil {
		return nil, err
	}
	taken := slices.Collect(maps.Values(snap.Header.Retired))
	d.plan = layout.PlanColumns(old, cur, follow, func(c string) bool { return d.retired[c] > 0 },
		func(n string) bool { return slices.Contains(taken, n) })
	return d, nil
}

// planRows decides the values written on rows and what the event says of
// them.
func (e *Engine) planRows(d *layoutMigration, fill map[string]map[string]any, rows []sheetsio.Row) error {
	cur := d.plan.New
	for _, r := range rows {
		if r.Anchor == "" {
			continue
		}
		d.same[r.Anchor] = d.visible[r.Anchor] == r.Hash
		vals, exists, err := e.proj.EntityValues(cur.Entity, r.Anchor)
		if err != nil || !exists {
			if err != nil {
				return err
			}
			continue
		}
		if vals, err = e.shown(cur.Entity, vals); err != nil {
			return err // the key file is not open yet: the migration is tried again
		}
		d.canonical[r.Anchor] = canonicalHash(cur, e.sheet.Columns(cur.Name), r.Anchor, vals)
		f, err := e.fillRow(d, r, vals)
		if err != nil {
			return err
		}
		if len(f) > 0 {
			fill[r.Anchor] = f
		}
		if d.shown[r.Anchor], err = shownHashes(cur, f); err != nil {
			return err
		}
	}
	return nil
}

// fillRow is what the migration writes on row r: canonical state in each
// column the plan fills, except, on an Input tab, a kept (retyped) cell
// that shows a value people typed the store has not imported; the
// record's key wherever its key cell would be left blank; and, on a row
// that had no record under the old layout (keyless), canonical state in
// every blank cell.
func (e *Engine) fillRow(d *layoutMigration, r sheetsio.Row, vals map[string]any) (map[string]any, error) {
	cp := d.plan
	out := map[string]any{}
	revived := keyless(cp.Old, r)
	for i, c := range cp.New.Columns {
		if c.Key && i != cp.New.Anchor && keyBlank(cp, i, r) {
			out[c.Name] = vals[c.Name]
		}
		if i == cp.New.Anchor || c.Key {
			continue
		}
		if revived && sourceBlank(cp, i, r) {
			out[c.Name] = vals[c.Name]
			continue
		}
		if !cp.Fill(i) {
			continue
		}
		if src := cp.Source[i]; src != "" && cp.New.Role == layout.RoleInput && !d.same[r.Anchor] {
			known, err := e.cellKnown(cp.Old, src, r)
			if err != nil {
				return nil, err
			}
			if !known {
				continue
			}
		}
		out[c.Name] = vals[c.Name]
	}
	return out, nil
}

// keyBlank reports whether key column i of the plan's new layout would
// be blank on row r after the migration: the column is new to the tab, or
// the cell it continues is blank. A row kept for review when its record
// left (a migration moved it to another key) lost its key cell with the
// old key column; when a later change brings a record of that key back,
// the row is that record's again and must show its key — a blank key cell
// is no value of a person's, and a row without its key is taken for a
// person's edit of the key (quarantined) and never decided.
func keyBlank(cp layout.ColumnPlan, i int, r sheetsio.Row) bool {
	return sourceBlank(cp, i, r)
}

// keyless reports whether row r shows no key under the old layout: a row
// kept for review when a migration moved its record to another key (its
// key cell left with the old key column, and a column new to the tab
// meanwhile was left blank on it: no record's value was written there).
// When a later change brings a record of that key back, the row is that
// record's again, and its blank cells are no person's values: kept, the
// poll would take a blank cell for a person's edit of a value the store
// last showed there, and overwrite the committed value with it.
func keyless(old layout.TabSpec, r sheetsio.Row) bool {
	found := false
	for j, c := range old.Columns {
		if !c.Key || j == old.Anchor {
			continue
		}
		if j < len(r.Cells) && !blankCell(r.Cells[j]) {
			return false
		}
		found = true
	}
	return found
}

// sourceBlank reports whether column i of the plan's new layout continues
// a cell that is blank on row r (or is new to the tab).
func sourceBlank(cp layout.ColumnPlan, i int, r sheetsio.Row) bool {
	src := cp.Source[i]
	if src == "" {
		return true
	}
	j := cp.Old.ColumnIndex(src)
	return j < 0 || j >= len(r.Cells) || blankCell(r.Cells[j])
}

// unimported counts, for each column people edited that leaves an Input
// tab (dropped, no longer editable), the cells that hold a value the
// store never imported: not blank and not the value the store last knew
// the cell to show. A row that shows what the store last wrote or
// accepted is no proof: the poll under the old layout accepts a row's
// edits of the fields kept, and the row's hash with them, without
// reading the leaving column.
func (e *Engine) unimported(old, cur layout.TabSpec, follow func(string) (string, bool), snap *sheetsio.TabSnapshot) (map[string]int64, error) {
	out := map[string]int64{}
	if old.Role != layout.RoleInput {
		return out, nil
	}
	for i, c := range old.Columns {
		if name, ok := follow(c.Name); i == old.Anchor || c.Key || (ok && cur.ColumnIndex(name) >= 0) {
			continue
		}
		for _, r := range snap.Rows {
			if blankCell(r.Cells[i]) {
				continue
			}
			known, err := e.cellKnown(old, c.Name, r)
			if err != nil {
				return nil, err
			}
			if !known {
				out[c.Name]++
			}
		}
	}
	return out, nil
}

// cellKnown reports whether the cell of column col (old layout) on row r
// shows the value the store last knew it to show (written or accepted).
func (e *Engine) cellKnown(old layout.TabSpec, col string, r sheetsio.Row) (bool, error) {
	if r.Anchor == "" {
		return false, nil
	}
	fields, err := e.proj.SheetFields(layout.RowBindingID(old.Name, r.Anchor))
	if err != nil {
		return false, err
	}
	sf, ok := fields[col]
	if !ok || !sf.ShownKnown {
		return false, nil
	}
	i := old.ColumnIndex(col)
	v, err := cell.Decode(old.Columns[i], r.Cells[i])
	if err != nil {
		return false, nil // a value the column cannot hold: a person's
	}
	h, err := aggregates.ShownHash(v)
	return err == nil && h == sf.ShownHash, nil
}

// shownHashes are the hashes of the values written in the columns people
// edit of an Input tab (nil elsewhere).
func shownHashes(spec layout.TabSpec, fill map[string]any) (map[string]string, error) {
	if spec.Role != layout.RoleInput || len(fill) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(fill))
	for f, v := range fill {
		if i := spec.ColumnIndex(f); i >= 0 && spec.Columns[i].Key {
			continue // the key cell: no column people edit
		}
		h, err := aggregates.ShownHash(v)
		if err != nil {
			return nil, err
		}
		out[f] = h
	}
	return out, nil
}

func blankCell(v any) bool {
	s, ok := v.(string)
	return v == nil || (ok && s == "")
}
