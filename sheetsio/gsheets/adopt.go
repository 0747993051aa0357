package gsheets

import (
	"context"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// The Provider adopts tabs people kept (hikoutei adopt).
var _ sheetsio.TabAdopter = (*Provider)(nil)

// plainFields is what ReadPlainTab reads of the tab: values, formulas,
// error values and merges (as the pollers' grid reads do), no formats.
const plainFields = "sheets(properties(sheetId,title),merges,data(startRow,rowData(values(userEnteredValue,effectiveValue))))"

// ReadPlainTab lists the spreadsheet's tabs (one enumeration) and, when
// one is titled title, reads it whole with grid data (one
// spreadsheets.get), so formulas, error values and merged cells show as
// such. Errors: read errors (*Error).
func (p *Provider) ReadPlainTab(ctx context.Context, spreadsheetID, title string) (*sheetsio.PlainTab, error) {
	w := sheetsio.OpenWorkbook(spreadsheetID, nil, nil)
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return nil, err
	}
	t := &sheetsio.PlainTab{Title: title}
	for _, s := range infos {
		t.Titles = append(t.Titles, s.Title)
		if s.Title == title {
			t.SheetID, t.Found = s.ID, true
		}
	}
	if !t.Found {
		return t, nil
	}
	var ss *sheets.Spreadsheet
	err = p.read(ctx, "grid_get", func(ctx context.Context) error {
		ss, err = p.svcOf(ctx).Spreadsheets.Get(spreadsheetID).Ranges(a1.QuoteSheet(title)).IncludeGridData(true).
			Fields(googleapi.Field(plainFields)).Context(ctx).Do()
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, sh := range ss.Sheets {
		if sh.Properties != nil && sh.Properties.SheetId == t.SheetID {
			t.Rows = observedRows(sh)
		}
	}
	return t, nil
}

// RenameTab renames one tab, fenced like a dispatch: it enumerates the
// tabs (the tab must still be titled from, and no tab titled to), reads
// the authority row (checkFence: this writer's fence, or vacant), then
// sends one batchUpdate with the rename (updateSheetProperties, field
// mask "title": nothing else of the tab changes) and, when the authority
// is vacant or older, the fence mirrored into it.
func (p *Provider) RenameTab(ctx context.Context, w *sheetsio.Workbook, sheetID int64, from, to string, f sheetsio.Fence) error {
	infos, err := p.enumerate(ctx, w)
	if err != nil {
		return err
	}
	if err := renamable(infos, sheetID, from, to); err != nil {
		return err
	}
	reqs, err := p.fencedRequests(ctx, w, f)
	if err != nil {
		return err
	}
	rename := &sheets.Request{UpdateSheetProperties: &sheets.UpdateSheetPropertiesRequest{
		Properties: &sheets.SheetProperties{SheetId: sheetID, Title: to, ForceSendFields: []string{"SheetId"}}, Fields: "title"}}
	if werr := p.sendBatch(ctx, w, append([]*sheets.Request{rename}, reqs...), nil, nil, nil); werr != nil {
		return werr
	}
	return nil
}

// renamable checks the enumerated tabs before a rename.
func renamable(infos []sheetInfo, sheetID int64, from, to string) error {
	found := false
	for _, s := range infos {
		switch {
		case s.Title == to && s.ID != sheetID:
			return newErr(sheetsio.CodeTabChanged, nil, "another tab already has the title the tab is to be kept under")
		case s.ID == sheetID:
			found = s.Title == from
		}
	}
	if !found {
		return newErr(sheetsio.CodeTabChanged, nil, "the tab was removed or renamed since it was read")
	}
	return nil
}

// fencedRequests reads the authority and returns the requests that
// mirror f into it (none when it already shows f). Errors: the
// authority's (CodeAuthorityForeign, CodeAuthorityStale, …).
func (p *Provider) fencedRequests(ctx context.Context, w *sheetsio.Workbook, f sheetsio.Fence) ([]*sheets.Request, error) {
	a, err := p.ReadAuthority(ctx, w)
	if err != nil {
		return nil, err
	}
	mirror, err := checkFence(a, f)
	if err != nil || !mirror {
		return nil, err
	}
	id, ok := w.SheetID(layout.AuthorityTab)
	if !ok {
		return nil, newErr(sheetsio.CodeTabMissing, nil, "authority tab not bound; run Provision")
	}
	req, err := authorityRequest(id, f, p.cfg.Now())
	if err != nil {
		return nil, err
	}
	return []*sheets.Request{req}, nil
}
