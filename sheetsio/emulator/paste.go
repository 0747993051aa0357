package emulator

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Paste types of a pasteData request.
const (
	pasteNormal = "PASTE_NORMAL"
	pasteValues = "PASTE_VALUES"
)

// pasteDataIn is PasteDataRequest as a request carries it.
type pasteDataIn struct {
	Coordinate *struct {
		SheetID     int64 `json:"sheetId"`
		RowIndex    int   `json:"rowIndex"`
		ColumnIndex int   `json:"columnIndex"`
	} `json:"coordinate"`
	Data      string `json:"data"`
	Delimiter string `json:"delimiter"`
	HTML      bool   `json:"html"`
	Type      string `json:"type"`
}

// reqPasteData applies a pasteData request: the data is split into rows
// at line breaks and into cells at the delimiter, and every cell is parsed
// like text a person pastes in the spreadsheet's locale (parseTypedIn): a
// number, date, boolean or formula where the text reads as one, text
// otherwise. An empty cell of the data clears its target. The emulator
// models delimited text only (html is refused), never grows the grid, and
// takes no CSV quoting: a cell's quotes are its text.
func reqPasteData(b *book, raw json.RawMessage) (any, error) {
	var req pasteDataIn
	if err := decodeReq(raw, &req); err != nil {
		return nil, err
	}
	switch {
	case req.Coordinate == nil:
		return nil, errorf(ErrInvalidArgument, "Invalid requests.pasteData: coordinate is required.")
	case req.HTML:
		return nil, errorf(ErrInvalidArgument, "Invalid requests.pasteData: html data is not modelled.")
	case req.Delimiter == "":
		return nil, errorf(ErrInvalidArgument, "Invalid requests.pasteData: delimiter is required.")
	case req.Type != "" && req.Type != pasteNormal && req.Type != pasteValues:
		return nil, errorf(ErrInvalidArgument, "Invalid requests.pasteData: type %q is not modelled.", req.Type)
	}
	s := b.sheetByID(req.Coordinate.SheetID)
	if s == nil {
		return nil, errorf(ErrInvalidArgument, "No grid with id: %d", req.Coordinate.SheetID)
	}
	rows, err := pastedRows(req.Data, req.Delimiter, b.Locale)
	if err != nil {
		return nil, err
	}
	return nil, pasteRows(s, req.Coordinate.RowIndex, req.Coordinate.ColumnIndex, rows)
}

// pastedRows splits and parses the data of a paste.
func pastedRows(data, delim, locale string) ([][]cellData, error) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	out := make([][]cellData, len(lines))
	for i, line := range lines {
		fields := strings.Split(strings.TrimSuffix(line, "\r"), delim)
		out[i] = make([]cellData, len(fields))
		for j, f := range fields {
			if utf8.RuneCountInString(f) > maxCellChars {
				return nil, tooManyChars()
			}
			out[i][j] = parseTypedIn(f, locale)
		}
	}
	return out, nil
}

// pasteRows writes parsed cells from (r0, c0); a cell outside the grid
// refuses the whole paste (the batchUpdate applies nothing).
func pasteRows(s *sheet, r0, c0 int, rows [][]cellData) error {
	for i, row := range rows {
		for j := range row {
			if r0+i >= s.RowCount || c0+j >= s.ColCount || r0 < 0 || c0 < 0 {
				return errorf(ErrGridLimits, "Range (%s) exceeds grid limits. Max rows: %d, max columns: %d",
					quoteForMessage(s.Title, a1Cells(gridRange{R0: r0 + i, R1: r0 + i + 1, C0: c0 + j, C1: c0 + j + 1})), s.RowCount, s.ColCount)
			}
		}
	}
	for i, row := range rows {
		for j, cd := range row {
			s.setCell(r0+i, c0+j, cd.keepAttached(s.cell(r0+i, c0+j)))
		}
	}
	return nil
}

// PastedText is what pasting text into one cell of a spreadsheet of
// locale stores: ok is true when it is stored as text, and s is that text
// (false: a number, date, boolean, formula or blank).
func PastedText(text, locale string) (s string, ok bool) {
	cd := parseTypedIn(text, locale)
	return cd.Str, cd.Kind == kindString
}

// pastedCells counts the cells a pasteData request carries (0 when it
// does not decode: the request itself is refused).
func pastedCells(raw json.RawMessage) int {
	var req pasteDataIn
	if json.Unmarshal(raw, &req) != nil || req.Delimiter == "" {
		return 0
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSuffix(req.Data, "\n"), "\n") {
		n += strings.Count(line, req.Delimiter) + 1
	}
	return n
}
