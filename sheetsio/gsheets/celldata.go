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
	var c cellSlot
	return c.fill(col, v)
}

// cellSlot holds one cell's CellData with the value it points to, so that
// a row's cells come in one allocation (rowData) instead of three a cell.
type cellSlot struct {
	cd  sheets.CellData
	ev  sheets.ExtendedValue
	str string
	num float64
	bit bool
}

// fill sets c to the CellData of v (as cellData) and returns it.
func (c *cellSlot) fill(col cell.Column, v any) *sheets.CellData {
	switch x := v.(type) {
	case string:
		c.str, c.ev.StringValue, c.cd.UserEnteredValue = x, &c.str, &c.ev
	case float64:
		c.num, c.ev.NumberValue, c.cd.UserEnteredValue = x, &c.num, &c.ev
	case bool:
		c.bit, c.ev.BoolValue, c.cd.UserEnteredValue = x, &c.bit, &c.ev
	}
	if col.Kind == cell.Time && v != nil {
		c.cd.UserEnteredFormat = &sheets.CellFormat{NumberFormat: &sheets.NumberFormat{
			Type: cell.TimeNumberFormatType, Pattern: cell.TimeNumberFormatPattern,
		}}
	}
	return &c.cd
}

// rowData builds the RowData of a full encoded row of spec.
func rowData(spec layout.TabSpec, encoded []any) *sheets.RowData {
	slots := make([]cellSlot, len(encoded))
	rd := &sheets.RowData{Values: make([]*sheets.CellData, len(encoded))}
	for i, v := range encoded {
		rd.Values[i] = slots[i].fill(spec.Columns[i], v)
	}
	return rd
}

// encodeRow returns the JSON batchBody writes for rowData(spec, encoded)
// of a row to append, without its trailing empty cells: a new row is
// empty past its last value, so leaving them out changes no cell (each is
// "{}", which would only clear it). The bytes are those of the sheets/v4
// encoding of that RowData (TestEncodeRowIsSheetsV4JSON). Errors: a
// number JSON cannot hold (NaN, ±Inf; cell.Encode refuses them first).
func encodeRow(spec layout.TabSpec, encoded []any) ([]byte, error) {
	n := len(encoded)
	for n > 0 && encoded[n-1] == nil {
		n--
	}
	if n == 0 {
		return []byte("{}"), nil
	}
	e := &bodyEncoder{b: make([]byte, 0, rowCapacity(encoded[:n]))}
	e.b = append(e.b, `{"values":[`...)
	var slot cellSlot
	for i, v := range encoded[:n] {
		if i > 0 {
			e.b = append(e.b, ',')
		}
		slot = cellSlot{}
		e.cell(slot.fill(spec.Columns[i], v))
	}
	e.b = append(e.b, ']', '}')
	return e.b, e.err
}

// rowCapacity is a first capacity for the JSON of cells: the members of
// a text cell ({"userEnteredValue":{"stringValue":""}} and a comma) each,
// plus the text.
func rowCapacity(cells []any) int {
	n := 16
	for _, v := range cells {
		n += 42
		if s, ok := v.(string); ok {
			n += len(s) + len(s)/8
		}
	}
	return n
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
