package gsheets

import (
	"context"
	"errors"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

const (
	newTabRows = 1000
	minTabCols = 26
)

// Provision makes the spreadsheet carry every tab of schema and returns the
// bound Workbook. It costs one enumeration, one values.batchGet of the
// existing tabs and, only if something is missing, ONE batchUpdate that adds
// every missing tab (with a deterministic sheetId, its header row and frozen
// header; receipts/authority hidden), writes the header of any existing
// but completely empty tab and gives every tab without them its column
// formats (date-time Time columns, clipped receipts: columnformat.go). On
// a spreadsheet that holds nothing but its empty default tab, the same
// batchUpdate removes that tab and titles an untitled spreadsheet
// (defaulttab.go; one more read checks the tab is empty). It is
// idempotent: after a lost response a re-run finds the tabs and writes
// nothing.
//
// Errors: read errors (*Error CodePermissionDenied, CodeSpreadsheetNotFound,
// CodeReadRejected, CodeReadUnavailable); a *WriteError (Uncertain: re-run
// Provision; Terminal: rejected); and, with a non-nil Workbook, an *Error
// with CodeHeaderDrift joining every drifted tab's *layout.HeaderError (those
// tabs stay blocked; dispatches to other tabs work).
func (p *Provider) Provision(ctx context.Context, spreadsheetID string, schema *layout.Schema) (*sheetsio.Workbook, error) {
	w := sheetsio.OpenWorkbook(spreadsheetID, schema, nil)
	_, err := p.Reprovision(ctx, w)
	if e := (*sheetsio.Error)(nil); err != nil && !(errors.As(err, &e) && e.Code == sheetsio.CodeHeaderDrift) {
		return nil, err
	}
	return w, err
}

// Reprovision runs Provision's steps on a bound Workbook: tabs a person
// deleted are created again (empty, with their header) and bound, so a
// reconciliation can repopulate them. It returns the logical tabs it
// created. Errors: as Provision (header drift is an *Error with
// CodeHeaderDrift; the Workbook stays usable).
func (p *Provider) Reprovision(ctx context.Context, w *sheetsio.Workbook) ([]string, error) {
	read := p.cfg.Now()
	ss, err := p.getSpreadsheet(ctx, w, provisionFields)
	if err != nil {
		return nil, err
	}
	infos := sheetInfos(ss)
	resolved := resolve(w, infos)
	snaps, err := p.readTabs(ctx, w, resolved, existing(w.Schema(), resolved))
	if err != nil {
		return nil, err
	}
	reqs, drift := provisionRequests(w.Schema(), resolved, snaps, infos)
	tidy, err := p.tidyRequests(ctx, w, infos, resolved, spreadsheetTitleOf(ss))
	if err != nil {
		return nil, err
	}
	reqs = append(reqs, tidy...)
	if len(reqs) > 0 {
		if err := p.applyProvision(ctx, w, reqs); err != nil {
			return nil, err
		}
	}
	w.NoteGrid(provisionedGrid(infos, reqs), read)
	var created []string
	for _, t := range w.Schema().Tabs() {
		if _, ok := resolved[t.Name]; !ok {
			created = append(created, t.Name)
		}
	}
	w.NoteCreated(created...)
	trustOf(w).trustSnaps(provisionedTrust(snaps, created), read)
	if len(drift) > 0 {
		return created, &sheetsio.Error{Code: sheetsio.CodeHeaderDrift, Msg: "tabs blocked until their headers are repaired", Err: errors.Join(drift...)}
	}
	return created, nil
}

// provisionedTrust is what a provisioning verified, as Workbook.trustSnaps
// takes it: each existing tab whose header the read validated, and each
// tab it created (with its header, under its own name, in the batchUpdate
// that succeeded). Trusted from when the enumeration began, they let the
// first appends go blind (blindappend.go) once the authority is verified
// too. A drifted tab is forgotten; an existing empty one (its header just
// written) too, so its first dispatch reads.
func provisionedTrust(snaps map[string]*sheetsio.TabSnapshot, created []string) map[string]*sheetsio.TabSnapshot {
	out := make(map[string]*sheetsio.TabSnapshot, len(snaps)+len(created))
	for name, s := range snaps {
		if s.Empty {
			s = &sheetsio.TabSnapshot{Tab: name}
		}
		out[name] = s
	}
	for _, name := range created {
		out[name] = &sheetsio.TabSnapshot{Tab: name, Title: name}
	}
	return out
}

func existing(schema *layout.Schema, resolved map[string]sheetInfo) []string {
	var out []string
	for _, t := range schema.Tabs() {
		if _, ok := resolved[t.Name]; ok {
			out = append(out, t.Name)
		}
	}
	return out
}

func spreadsheetTitleOf(ss *sheets.Spreadsheet) string {
	if ss.Properties == nil {
		return ""
	}
	return ss.Properties.Title
}

// provisionRequests plans addSheet+header for missing tabs and a header for
// existing empty ones, and the column formats (columnformat.go) of every
// tab it creates or finds without them; drifted tabs are reported, never
// rewritten nor formatted.
func provisionRequests(schema *layout.Schema, resolved map[string]sheetInfo, snaps map[string]*sheetsio.TabSnapshot, infos []sheetInfo) ([]*sheets.Request, []error) {
	taken := map[int64]bool{}
	for _, s := range infos {
		taken[s.ID] = true
	}
	var reqs []*sheets.Request
	var drift []error
	for _, t := range schema.Tabs() {
		info, ok := resolved[t.Name]
		switch {
		case !ok:
			id := freeSheetID(t.Name, taken)
			reqs = append(reqs, addSheetRequest(t, id), updateCellsRequest(id, 0, 0, headerRow(t, 0)))
			reqs = append(reqs, choiceRequests(t, id)...)
			reqs = append(reqs, formatRequests(t, id)...)
			continue
		case snaps[t.Name].Empty:
			reqs = append(reqs, widenRequests(t, info)...)
			reqs = append(reqs, updateCellsRequest(info.ID, 0, 0, headerRow(t, 0)))
			reqs = append(reqs, choiceRequests(t, info.ID)...)
		case extensible(t, snaps[t.Name].Err) > 0:
			from := extensible(t, snaps[t.Name].Err)
			reqs = append(reqs, widenRequests(t, info)...)
			reqs = append(reqs, updateCellsRequest(info.ID, 0, from, headerRow(t, from)))
			reqs = append(reqs, choiceRequests(t, info.ID)...)
		case snaps[t.Name].Err != nil:
			drift = append(drift, snaps[t.Name].Err)
			continue
		}
		if info.Formats == "" {
			reqs = append(reqs, formatRequests(t, info.ID)...)
		}
	}
	return reqs, drift
}

// extensible returns where the missing header cells of a tab written by
// an earlier layout start (layout.HeaderError.Extension), 0 when err is
// not such a drift.
func extensible(t layout.TabSpec, err error) int {
	var he *layout.HeaderError
	if !errors.As(err, &he) {
		return 0
	}
	from, ok := he.Extension(t)
	if !ok {
		return 0
	}
	return from
}

// choiceRequests offers each column with Choices as a dropdown on every
// data row, present and future (the range has no end row). The rule is
// not strict: a person's other text is kept and reported, never refused.
func choiceRequests(t layout.TabSpec, sheetID int64) []*sheets.Request {
	var out []*sheets.Request
	for i, c := range t.Columns {
		if len(c.Choices) == 0 {
			continue
		}
		vals := make([]*sheets.ConditionValue, len(c.Choices))
		for j, ch := range c.Choices {
			vals[j] = &sheets.ConditionValue{UserEnteredValue: ch}
		}
		out = append(out, &sheets.Request{SetDataValidation: &sheets.SetDataValidationRequest{
			Range: &sheets.GridRange{SheetId: sheetID, StartRowIndex: 1, StartColumnIndex: int64(i), EndColumnIndex: int64(i + 1),
				ForceSendFields: []string{"SheetId"}},
			Rule: &sheets.DataValidationRule{Condition: &sheets.BooleanCondition{Type: "ONE_OF_LIST", Values: vals}, ShowCustomUi: true},
		}})
	}
	return out
}

func freeSheetID(name string, taken map[int64]bool) int64 {
	for salt := 0; ; salt++ {
		if id := stableSheetID(name, salt); !taken[id] {
			taken[id] = true
			return id
		}
	}
}

func addSheetRequest(t layout.TabSpec, id int64) *sheets.Request {
	return &sheets.Request{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{
		SheetId: id, Title: t.Name, Hidden: t.Hidden,
		GridProperties: &sheets.GridProperties{RowCount: newTabRows, ColumnCount: int64(max(len(t.Columns), minTabCols)), FrozenRowCount: 1},
	}}}
}

func widenRequests(t layout.TabSpec, info sheetInfo) []*sheets.Request {
	if info.Cols == 0 || info.Cols >= int64(len(t.Columns)) {
		return nil
	}
	return []*sheets.Request{{AppendDimension: &sheets.AppendDimensionRequest{
		SheetId: info.ID, Dimension: "COLUMNS", Length: int64(len(t.Columns)) - info.Cols,
	}}}
}

// applyProvision sends the provisioning batchUpdate and binds new sheetIds
// from the addSheet replies.
func (p *Provider) applyProvision(ctx context.Context, w *sheetsio.Workbook, reqs []*sheets.Request) error {
	var resp *sheets.BatchUpdateSpreadsheetResponse
	werr := p.write(ctx, "provision", func(ctx context.Context) error {
		var err error
		resp, err = p.svcOf(ctx).Spreadsheets.BatchUpdate(w.SpreadsheetID(), &sheets.BatchUpdateSpreadsheetRequest{Requests: reqs}).Context(ctx).Do()
		return err
	})
	if werr != nil {
		return werr
	}
	for _, r := range resp.Replies {
		if r != nil && r.AddSheet != nil && r.AddSheet.Properties != nil {
			w.Bind(r.AddSheet.Properties.Title, r.AddSheet.Properties.SheetId)
		}
	}
	return nil
}
