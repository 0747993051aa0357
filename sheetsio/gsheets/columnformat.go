package gsheets

import (
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Column formats. Every Time cell the product writes carries its
// date-time number format (cellData); provisioning also gives every Time
// column its format below the header, so a cell shows a date-time even when
// it was written by an earlier version or typed by a person, and clips the
// cells of the hidden receipts tab so its long entries stay one line.
//
// A tab that has these formats carries the developer metadata
// formatsMarkerKey = formatsVersion (location: the tab). Provisioning
// applies the formats to every bound tab without the marker — a tab
// written by an earlier version is formatted in place, its rows untouched —
// and to every tab it creates, in the same batchUpdate, so a start costs no
// extra request once the marker is there.
const (
	formatsMarkerKey = "hikoutei_formats"
	formatsVersion   = "1"
	// formatFields is the field mask of a Time column's format.
	formatFields = "userEnteredFormat.numberFormat"
	// clipFields is the field mask of the receipts tab's wrap strategy.
	clipFields = "userEnteredFormat.wrapStrategy"
	// provisionFields is the enumeration Provision makes: the tabs with
	// their formats marker, and the spreadsheet's title (for the title a
	// fresh spreadsheet gets, see defaulttab.go).
	provisionFields = "properties(title),sheets(properties(sheetId,title,hidden,gridProperties(rowCount,columnCount))," +
		"developerMetadata(metadataKey,metadataValue))"
)

// formatsMarker returns the value of the formats marker among a tab's
// developer metadata ("" when absent).
func formatsMarker(md []*sheets.DeveloperMetadata) string {
	for _, m := range md {
		if m != nil && m.MetadataKey == formatsMarkerKey {
			return m.MetadataValue
		}
	}
	return ""
}

// formatRequests gives tab t (sheetId id) its column formats and marks it.
// The ranges start below the header and have no end row (the whole
// column, as far as the grid goes); the values are never touched.
func formatRequests(t layout.TabSpec, id int64) []*sheets.Request {
	var out []*sheets.Request
	for i, c := range t.Columns {
		if c.Kind == cell.Time {
			out = append(out, timeColumnFormat(id, i))
		}
	}
	if t.Role == layout.RoleReceipts {
		out = append(out, clipTab(id))
	}
	return append(out, formatsMarkerRequest(id))
}

func timeColumnFormat(id int64, col int) *sheets.Request {
	return &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{
		Range: &sheets.GridRange{SheetId: id, StartRowIndex: 1, StartColumnIndex: int64(col), EndColumnIndex: int64(col + 1),
			ForceSendFields: []string{"SheetId"}},
		Cell: &sheets.CellData{UserEnteredFormat: &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{
			Type: cell.TimeNumberFormatType, Pattern: cell.TimeNumberFormatPattern,
		}}},
		Fields: formatFields,
	}}
}

// clipTab makes every cell of the tab clip its text (no wrapping, so a
// receipt row stays one line high).
func clipTab(id int64) *sheets.Request {
	return &sheets.Request{RepeatCell: &sheets.RepeatCellRequest{
		Range:  &sheets.GridRange{SheetId: id, ForceSendFields: []string{"SheetId"}},
		Cell:   &sheets.CellData{UserEnteredFormat: &sheets.CellFormat{WrapStrategy: "CLIP"}},
		Fields: clipFields,
	}}
}

func formatsMarkerRequest(id int64) *sheets.Request {
	return &sheets.Request{CreateDeveloperMetadata: &sheets.CreateDeveloperMetadataRequest{
		DeveloperMetadata: &sheets.DeveloperMetadata{
			MetadataKey: formatsMarkerKey, MetadataValue: formatsVersion, Visibility: "DOCUMENT",
			Location: &sheets.DeveloperMetadataLocation{SheetId: id, ForceSendFields: []string{"SheetId"}},
		},
	}}
}
