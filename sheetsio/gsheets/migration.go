package gsheets

import (
	"context"
	"slices"
	"sort"
	"strings"
	"time"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// ReadHeaders implements sheetsio.Client: one values read of row 1 of
// every named tab by sheetId (an enumeration and a batchGet when an id is
// unknown or stale).
func (p *Provider) ReadHeaders(ctx context.Context, w *sheetsio.Workbook, tabs ...string) (map[string][]any, error) {
	for _, t := range tabs {
		if _, ok := w.Schema().Tab(t); !ok {
			return nil, newErr(sheetsio.CodeInvalidBatch, nil, "unknown tab %s", t)
		}
	}
	modes := make(map[string]readMode, len(tabs))
	for _, t := range tabs {
		modes[t] = readHeader
	}
	snaps, ok, err := p.readKnown(ctx, w, tabs, modes, nil, sheetsio.BodyDigest{})
	if err != nil {
		return nil, err
	}
	if !ok {
		infos, err := p.enumerate(ctx, w)
		if err != nil {
			return nil, err
		}
		if snaps, err = p.readTabs(ctx, w, resolve(w, infos), tabs, tabs...); err != nil {
			return nil, err
		}
	}
	out := make(map[string][]any, len(snaps))
	for t, s := range snaps {
		if s.Err == nil || !errorsIsTabMissing(s.Err) {
			out[t] = s.HeaderCells
		}
	}
	return out, nil
}

func errorsIsTabMissing(err error) bool { return errorCode(err) == sheetsio.CodeTabMissing }

// MigrateTab implements sheetsio.Client (see TabMigration): one read of
// the tab (under its old layout) and of the authority, the fence check,
// then the column changes, the header cells they change and the cells to
// write in one batchUpdate (the cells spill into further ones only past
// the batch size). The result's hashes say what each row shows now, and
// HeaderAfter the header row as the response showed it.
func (p *Provider) MigrateTab(ctx context.Context, w *sheetsio.Workbook, m sheetsio.TabMigration) (*sheetsio.MigrationResult, error) {
	cur, ok := w.Schema().Tab(m.Tab)
	if !ok || cur.Anchor < 0 || m.Fence == nil || m.Plan == nil || m.Old.Name != m.Tab {
		return nil, newErr(sheetsio.CodeInvalidBatch, nil, "invalid migration of tab %s", m.Tab)
	}
	old := sheetsio.OpenWorkbook(w.SpreadsheetID(), w.Schema().WithTab(m.Old), w.SheetIDs())
	snaps, err := p.readMigrated(ctx, old, m.Tab)
	if err != nil {
		return nil, err
	}
	snap := snaps[m.Tab]
	if snap.Err != nil {
		return nil, snap.Err
	}
	res := &sheetsio.MigrationResult{}
	var dres sheetsio.DispatchResult
	now := p.cfg.Now()
	mirror, err := fenceUnit(m.Fence, snaps[layout.AuthorityTab], &dres, now, false)
	if err != nil {
		return nil, err
	}
	res.Authority = dres.Authority
	plan, err := m.Plan(snap)
	if err != nil {
		return nil, err
	}
	units, err := migrationUnits(snap, plan, res)
	if err != nil {
		return nil, err
	}
	if mirror != nil {
		units = append([]*unit{mirror}, units...)
	}
	if res.HeaderAfter, err = p.sendMigration(ctx, w, m, units, snap, now); err != nil {
		return nil, err
	}
	p.logger().Debug("sheet tab migrated", "tab", m.Tab, "rows", len(res.Rows))
	return res, nil
}

// sendMigration sends the migration's units and returns the tab's header
// row as the batchUpdate's response showed it after the write (nil when
// not shown): the header cells it did not write are as people left them.
func (p *Provider) sendMigration(ctx context.Context, w *sheetsio.Workbook, m sheetsio.TabMigration, units []*unit, snap *sheetsio.TabSnapshot, now time.Time) ([]any, error) {
	watch := &headerWatch{title: snap.Title}
	if i := slices.IndexFunc(units, func(u *unit) bool { return u.sheetID == snap.SheetID }); i >= 0 {
		units[i].header = watch
	}
	p.sendChunks(ctx, w, chunk(units, bodyLimit(p.cfg.MaxBatchBytes), p.cfg.MaxBatchRequests), receiptMeta{fence: m.Fence, now: now, beforeWrite: m.BeforeWrite})
	trustOf(w).distrust(m.Tab)
	for _, u := range units {
		if u.err != nil {
			return nil, u.err
		}
	}
	return watch.seen, nil
}

// readMigrated reads the tab (w has its old layout) and the authority in
// one read by sheetId, or after an enumeration when an id is unknown.
func (p *Provider) readMigrated(ctx context.Context, w *sheetsio.Workbook, tab string) (map[string]*sheetsio.TabSnapshot, error) {
	tabs := []string{tab, layout.AuthorityTab}
	snaps, ok, err := p.readKnown(ctx, w, tabs, nil, nil, sheetsio.BodyDigest{})
	if err != nil || ok {
		return snaps, err
	}
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return nil, err
	}
	return p.readTabs(ctx, w, resolve(w, infos), tabs)
}

// migrationUnits plans the migration's requests: the column changes and
// the header cells they change (one unit, always first: they land
// together), then the cells written, and records in res the header and
// each row's hashes.
func migrationUnits(snap *sheetsio.TabSnapshot, plan sheetsio.MigrationPlan, res *sheetsio.MigrationResult) ([]*unit, error) {
	cp := plan.Columns
	res.Header = cp.Headers(snap.Header.Retired)
	structure := &unit{op: -1, order: orderUpdate, sheetID: snap.SheetID}
	structure.reqs = append(columnRequests(snap.SheetID, cp, snap.Header.Retired),
		headerRequests(snap.SheetID, columnTargets(cp, snap.Header.Retired), res.Header)...)
	for i, c := range cp.New.Columns {
		if c.Kind == cell.Time && cp.Fill(i) {
			structure.reqs = append(structure.reqs, timeColumnFormat(snap.SheetID, i))
		}
	}
	structure.measure()
	rows, err := migratedRows(snap, plan, res)
	if err != nil {
		return nil, err
	}
	fills := fillUnits(snap.SheetID, cp.New, rows)
	if len(structure.reqs) == 0 {
		return fills, nil // nothing moves and no header changes: only cells
	}
	return append([]*unit{structure}, fills...), nil
}

// migratedRow is one row in the current layout: its encoded cells and
// which of them the migration writes.
type migratedRow struct {
	sheetRow int
	cells    []any
	written  map[int]bool
}

// migratedRows maps every anchored row read to the current layout
// (cells kept by their column, then the planned values encoded) and
// records its hashes.
func migratedRows(snap *sheetsio.TabSnapshot, plan sheetsio.MigrationPlan, res *sheetsio.MigrationResult) ([]migratedRow, error) {
	cp := plan.Columns
	var out []migratedRow
	for _, r := range snap.Rows {
		if r.Anchor == "" {
			continue
		}
		cells := make([]any, len(cp.New.Columns))
		for i, src := range cp.Source {
			if src != "" {
				cells[i] = r.Cells[cp.Old.ColumnIndex(src)]
			}
		}
		cols, _, err := sheetsio.EncodeValues(cp.New, plan.Fill[r.Anchor], cells)
		if err != nil {
			return nil, err
		}
		mr := migratedRow{sheetRow: r.SheetRow, cells: cells, written: map[int]bool{}}
		for _, c := range cols {
			mr.written[c] = true
		}
		out = append(out, mr)
		res.Rows = append(res.Rows, sheetsio.MigratedRow{Anchor: r.Anchor, SheetRow: r.SheetRow, Before: r.Hash, After: cp.New.RowHash(cells)})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].sheetRow < out[b].sheetRow })
	return out, nil
}

// fillUnits writes the planned cells: per column, one updateCells per run
// of consecutive rows that write it, cut every fillRunBytes.
func fillUnits(sheetID int64, spec layout.TabSpec, rows []migratedRow) []*unit {
	var out []*unit
	for c := range spec.Columns {
		var run []*sheets.RowData
		start, size := 0, 0
		flush := func() {
			if len(run) > 0 {
				u := &unit{op: -1, order: orderUpdate, sheetID: sheetID, reqs: []*sheets.Request{updateCellsRequest(sheetID, start-1, c, run...)}}
				u.measure()
				out, run, size = append(out, u), nil, 0
			}
		}
		for i, r := range rows {
			if !r.written[c] || (len(run) > 0 && r.sheetRow != rows[i-1].sheetRow+1) {
				flush()
			}
			if r.written[c] {
				if len(run) == 0 {
					start = r.sheetRow
				}
				run = append(run, &sheets.RowData{Values: []*sheets.CellData{cellData(spec.Columns[c], r.cells[c])}})
				if size += rowCapacity(r.cells[c : c+1]); size >= fillRunBytes {
					flush()
				}
			}
		}
		flush()
	}
	return out
}

// fillRunBytes bounds the cells of one fill unit (by rowCapacity). A
// unit is never split (a body refused for its size is split between
// units), and a column filled on every row of a large tab is more than a
// body may carry: 12 MB of updateCells on 171,075 rows, where Google
// refuses a body over 10 MiB. Units of about 1 MiB go several to a body.
const fillRunBytes = 1 << 20

// headerRequests writes only the header cells the migration changes: a
// new column's, a renamed one's, a column retired now. targets are the
// columns after the migration by identity (columnTargets), names their
// headers. Another header cell keeps what it shows (it moved with its
// column): a person's edit of it between the read and the write is kept.
func headerRequests(sheetID int64, targets, names []string) []*sheets.Request {
	var reqs []*sheets.Request
	for k, id := range targets {
		if k < len(names) && headerShown(id) != names[k] {
			rd := &sheets.RowData{Values: []*sheets.CellData{cellData(cell.Column{Kind: cell.String}, names[k])}}
			reqs = append(reqs, updateCellsRequest(sheetID, 0, k, rd))
		}
	}
	return reqs
}

// headerShown is the header a column shows before its header is written,
// by its identity (columnTargets): its old name, its retired header, or
// blank for a new column.
func headerShown(id string) string {
	if strings.HasPrefix(id, "n:") {
		return ""
	}
	return id[2:]
}

// columnRequests turns the column plan into deleteDimension,
// insertDimension and moveDimension requests, in order: the tab's
// columns as the read found them (the old layout, then retired columns
// by position) become the current layout, then the retired columns it
// already had, then those it retires now. Every column keeps its cells,
// notes and validation as it moves.
func columnRequests(sheetID int64, cp layout.ColumnPlan, retired map[int]string) []*sheets.Request {
	phys := make([]string, len(cp.Old.Columns))
	for i, c := range cp.Old.Columns {
		phys[i] = "o:" + c.Name
	}
	for pos, name := range retired {
		for len(phys) <= pos {
			phys = append(phys, "")
		}
		phys[pos] = "r:" + name
	}
	var reqs []*sheets.Request
	var del []int
	for _, name := range cp.Drop {
		del = append(del, slices.Index(phys, "o:"+name))
	}
	sort.Sort(sort.Reverse(sort.IntSlice(del)))
	for _, at := range del {
		reqs = append(reqs, dimensionRequest(sheetID, "delete", at, 0))
		phys = slices.Delete(phys, at, at+1)
	}
	for k, id := range columnTargets(cp, retired) {
		switch j := slices.Index(phys, id); {
		case j == k:
		case j < 0:
			reqs = append(reqs, dimensionRequest(sheetID, "insert", k, 0))
			phys = slices.Insert(phys, k, id)
		default:
			reqs = append(reqs, dimensionRequest(sheetID, "move", j, k))
			phys = slices.Insert(slices.Delete(phys, j, j+1), k, id)
		}
	}
	return reqs
}

// columnTargets is the column order after the migration, by identity:
// "o:<old name>" for a kept column, "n:<name>" for a new one, "r:<header>"
// for a retired column already there.
func columnTargets(cp layout.ColumnPlan, retired map[int]string) []string {
	var out []string
	for i, src := range cp.Source {
		if src != "" {
			out = append(out, "o:"+src)
		} else {
			out = append(out, "n:"+cp.New.Columns[i].Name)
		}
	}
	for _, pos := range sortedKeys(retired) {
		out = append(out, "r:"+retired[pos])
	}
	for _, name := range cp.Retire {
		out = append(out, "o:"+name)
	}
	return out
}

func sortedKeys(m map[int]string) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// dimensionRequest is one column request: delete or insert the column at
// at, or move the column at at to dest (dest < at: counted the same
// before and after the removal).
func dimensionRequest(sheetID int64, kind string, at, dest int) *sheets.Request {
	rng := &sheets.DimensionRange{SheetId: sheetID, Dimension: "COLUMNS", StartIndex: int64(at), EndIndex: int64(at + 1),
		ForceSendFields: []string{"SheetId", "StartIndex"}}
	switch kind {
	case "delete":
		return &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: rng}}
	case "insert":
		return &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{Range: rng, InheritFromBefore: at > 0}}
	}
	return &sheets.Request{MoveDimension: &sheets.MoveDimensionRequest{Source: rng, DestinationIndex: int64(dest),
		ForceSendFields: []string{"DestinationIndex"}}}
}
