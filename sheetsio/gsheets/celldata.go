package gsheets

import (
	"google.golang.org/api/sheets/v4"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// valueFields is the field mask of every cell write: the value and its
// number format (set for Time columns, cleared otherwise).
const valueFields = "userEnteredValue,userEnteredFormat.numberFormat"

// cellData turns one encoded value (cell.Encode output: string, float64,
// bool or nil) of a column into a RAW-equivalent CellData: text always as
// stringValue, so "=1+1" is never a formula; nil clears the cell.
func cellData(col cell.Column, v any) *sheets.CellData {
	cd := &sheets.CellData{}
	switch x := v.(type) {
	case string:
		cd.UserEnteredValue = &sheets.ExtendedValue{StringValue: &x}
	case float64:
		cd.UserEnteredValue = &sheets.ExtendedValue{NumberValue: &x}
	case bool:
		cd.UserEnteredValue = &sheets.ExtendedValue{BoolValue: &x}
	}
	if col.Kind == cell.Time && v != nil {
		cd.UserEnteredFormat = &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{
			Type: cell.TimeNumberFormatType, Pattern: cell.TimeNumberFormatPattern,
		}}
	}
	return cd
}

// rowData builds the RowData of a full encoded row of spec.
func rowData(spec layout.TabSpec, encoded []any) *sheets.RowData {
	rd := &sheets.RowData{Values: make([]*sheets.CellData, len(encoded))}
	for i, v := range encoded {
		rd.Values[i] = cellData(spec.Columns[i], v)
	}
	return rd
}

// headerRow builds the header RowData of spec (text cells).
func headerRow(spec layout.TabSpec, from int) *sheets.RowData {
	rd := &sheets.RowData{}
	for _, h := range spec.Headers()[from:] {
		rd.Values = append(rd.Values, cellData(cell.Column{Kind: cell.String}, h))
	}
	return rd
}

// updateCellsRequest writes rows starting at the 0-based grid row/column of
// the sheet, covering exactly the cells given.
func updateCellsRequest(sheetID int64, row, col int, rows ...*sheets.RowData) *sheets.Request {
	width := 0
	for _, r := range rows {
		width = max(width, len(r.Values))
	}
	return &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: sheetID, StartRowIndex: int64(row), EndRowIndex: int64(row + len(rows)),
			StartColumnIndex: int64(col), EndColumnIndex: int64(col + width)},
		Rows: rows, Fields: valueFields,
	}}
}

func appendCellsRequest(sheetID int64, rows []*sheets.RowData) *sheets.Request {
	return &sheets.Request{AppendCells: &sheets.AppendCellsRequest{SheetId: sheetID, Rows: rows, Fields: valueFields}}
}

func deleteRowRequest(sheetID int64, row int) *sheets.Request {
	return &sheets.Request{DeleteDimension: &sheets.DeleteDimensionRequest{Range: &sheets.DimensionRange{
		SheetId: sheetID, Dimension: "ROWS", StartIndex: int64(row), EndIndex: int64(row + 1),
	}}}
}
