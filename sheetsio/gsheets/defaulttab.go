package gsheets

import (
	"context"
	"regexp"
	"strings"

	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// A fresh spreadsheet. When Provision finds a spreadsheet that holds
// nothing but its empty default tab, it removes that tab and, if the
// spreadsheet is still called "Untitled spreadsheet", titles it, in the
// batchUpdate that adds the product's tabs (after them: Google refuses to
// remove a document's last tab).
//
// The default tab is recognised conservatively; anything else is kept:
//   - no tab of the layout is in the spreadsheet yet (so a tab a person
//     adds beside the product's tabs is never a candidate), and the
//     default tab is the spreadsheet's only tab;
//   - it is the document's first tab (sheetId 0) and keeps a default name:
//     one word and "1" ("Sheet1", "Feuille 1", "Tabelle1"); a renamed tab
//     is kept, even empty;
//   - it holds nothing: no value, note, format, validation, link, merge,
//     protection, filter, chart, conditional format, banding, group,
//     developer metadata or comment anchor, no hidden row or column, and
//     the grid properties of a new tab (1000 × 26, nothing frozen,
//     gridlines shown, visible, left to right, no tab colour).
//
// Checking the last point costs one read, made only when the first two
// hold (a brand-new spreadsheet).
const (
	untitledTitle = "Untitled spreadsheet"
	productTitle  = "Hikoutei"
	maxTitleRunes = 100
	defaultRows   = 1000
	defaultCols   = 26
	// blankFields is what the emptiness check reads of the candidate tab.
	blankFields = "sheets(properties(sheetId,title,hidden,rightToLeft,tabColor,tabColorStyle,gridProperties)," +
		"merges,conditionalFormats,protectedRanges,basicFilter,filterViews,charts,bandedRanges,developerMetadata," +
		"rowGroups,columnGroups,slicers,tables,commentAnchors," +
		"data(rowData(values(userEnteredValue,note,userEnteredFormat,dataValidation,textFormatRuns,hyperlink,pivotTable," +
		"dataSourceTable,chipRuns)),rowMetadata(hiddenByUser,developerMetadata),columnMetadata(hiddenByUser,developerMetadata)))"
)

// defaultTabName matches the default name of a new spreadsheet's first
// tab in any language: letters, an optional space, then "1".
var defaultTabName = regexp.MustCompile(`^\p{L}+ ?1$`)

// tidyRequests returns the requests that remove the lone empty default tab
// and title the spreadsheet, or none. infos are the enumerated tabs,
// resolved the layout's tabs among them, title the spreadsheet's title.
func (p *Provider) tidyRequests(ctx context.Context, w *sheetsio.Workbook, infos []sheetInfo, resolved map[string]sheetInfo, title string) ([]*sheets.Request, error) {
	if len(resolved) > 0 || len(infos) != 1 || infos[0].ID != 0 || !defaultTabName.MatchString(infos[0].Title) {
		return nil, nil
	}
	ss, err := p.getTab(ctx, w, infos[0].Title)
	if err != nil {
		return nil, err
	}
	if len(ss.Sheets) != 1 || !blankTab(ss.Sheets[0]) {
		return nil, nil
	}
	reqs := []*sheets.Request{{DeleteSheet: &sheets.DeleteSheetRequest{SheetId: 0, ForceSendFields: []string{"SheetId"}}}}
	if title == untitledTitle {
		reqs = append(reqs, &sheets.Request{UpdateSpreadsheetProperties: &sheets.UpdateSpreadsheetPropertiesRequest{
			Properties: &sheets.SpreadsheetProperties{Title: spreadsheetTitle(w.Schema())}, Fields: "title",
		}})
	}
	return reqs, nil
}

// getTab reads everything blankTab looks at of one tab.
func (p *Provider) getTab(ctx context.Context, w *sheetsio.Workbook, title string) (*sheets.Spreadsheet, error) {
	var ss *sheets.Spreadsheet
	err := p.read(ctx, "default_tab", func(ctx context.Context) error {
		var err error
		ss, err = p.svcOf(ctx).Spreadsheets.Get(w.SpreadsheetID()).Ranges(a1.QuoteSheet(title)).IncludeGridData(true).
			Fields(blankFields).Context(ctx).Do()
		return err
	})
	return ss, err
}

// spreadsheetTitle is the title Provision gives a fresh untitled
// spreadsheet: "Hikoutei — " and the layout's entity names in declaration
// order ("Hikoutei — Airport, Runway"), cut to 100 characters; "Hikoutei"
// for a layout without entities.
func spreadsheetTitle(s *layout.Schema) string {
	var names []string
	for _, t := range s.Tabs() {
		if t.Role == layout.RoleSystem {
			names = append(names, t.Entity)
		}
	}
	if len(names) == 0 {
		return productTitle
	}
	title := []rune(productTitle + " — " + strings.Join(names, ", "))
	if len(title) > maxTitleRunes {
		title = append(title[:maxTitleRunes-1], '…')
	}
	return string(title)
}

// blankTab reports whether a tab read with blankFields holds nothing and
// keeps a new tab's properties.
func blankTab(sh *sheets.Sheet) bool {
	return defaultProperties(sh.Properties) && bareSheet(sh) && blankData(sh.Data)
}

func defaultProperties(p *sheets.SheetProperties) bool {
	if p == nil || p.Hidden || p.RightToLeft || p.TabColor != nil || p.TabColorStyle != nil {
		return false
	}
	g := p.GridProperties
	return g != nil && g.RowCount == defaultRows && g.ColumnCount == defaultCols && g.FrozenRowCount == 0 &&
		g.FrozenColumnCount == 0 && !g.HideGridlines && !g.RowGroupControlAfter && !g.ColumnGroupControlAfter
}

// bareSheet: none of the things a tab may carry besides cells.
func bareSheet(sh *sheets.Sheet) bool {
	return len(sh.Merges)+len(sh.ConditionalFormats)+len(sh.ProtectedRanges)+len(sh.FilterViews)+len(sh.Charts)+
		len(sh.BandedRanges)+len(sh.DeveloperMetadata)+len(sh.RowGroups)+len(sh.ColumnGroups)+len(sh.Slicers)+
		len(sh.Tables)+len(sh.CommentAnchors) == 0 && sh.BasicFilter == nil
}

func blankData(data []*sheets.GridData) bool {
	for _, g := range data {
		if g == nil {
			continue
		}
		if !blankDimensions(g.RowMetadata) || !blankDimensions(g.ColumnMetadata) {
			return false
		}
		for _, r := range g.RowData {
			if r != nil && !blankCells(r.Values) {
				return false
			}
		}
	}
	return true
}

func blankDimensions(ds []*sheets.DimensionProperties) bool {
	for _, d := range ds {
		if d != nil && (d.HiddenByUser || len(d.DeveloperMetadata) > 0) {
			return false
		}
	}
	return true
}

func blankCells(cells []*sheets.CellData) bool {
	for _, c := range cells {
		if c != nil && (c.UserEnteredValue != nil || c.Note != "" || c.UserEnteredFormat != nil || c.DataValidation != nil ||
			len(c.TextFormatRuns) > 0 || c.Hyperlink != "" || c.PivotTable != nil || c.DataSourceTable != nil || len(c.ChipRuns) > 0) {
			return false
		}
	}
	return true
}
