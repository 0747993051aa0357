package gsheets

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/api/sheets/v4"
)

// Compact appends. New rows of a tab go out as three kinds of request in
// the batchUpdate that carries the fence and the receipts:
//
//  1. insertDimension adds exactly the new rows at a known grid row (the
//     row after the tab's last row with data as the preflight or the
//     trust saw it), so nothing below is ever overwritten: a row a person
//     added since moves down;
//  2. one pasteData of tab-delimited text fills the cells whose text Sheets
//     provably reads back as the same string (pastable), about the bytes
//     of a raw values write;
//  3. updateCells writes every column of the block holding any other cell
//     (numbers, booleans, times, numeric-looking text, ...) exactly as the
//     old appendCells did: typed CellData.
//
// A sheet whose locale the emulator does not model, or whose insertion
// row is unknown, keeps appendCells.

// pasteDelimiter separates the cells of a pasted row; rows are separated
// by line breaks.
const pasteDelimiter = "\t"

// maxPastedChars bounds the text of one pasted cell (longer text goes as
// CellData).
const maxPastedChars = 1000

// pasteLocales are the spreadsheet locales whose paste parsing pastable is
// written against (those the emulator models).
var pasteLocales = map[string]bool{"en_US": true, "en_GB": true, "de_DE": true, "fr_FR": true}

// boolWords are the words a paste reads as a boolean in some pasteLocale.
var boolWords = []string{"TRUE", "FALSE", "WAHR", "FALSCH", "VRAI", "FAUX"}

// pastable reports whether text pasted into a spreadsheet of any
// pasteLocale reads back as exactly s, a string. Conservative: it starts
// with a letter (no formula, sign, apostrophe, currency or error literal),
// holds no digit (no number, date, time or percent can be read from it),
// is not a boolean word, and holds no delimiter, line break, quote or
// other control character and no trailing space.
func pastable(s string) bool {
	if s == "" || len(s) > maxPastedChars || !utf8.ValidString(s) {
		return false
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if !unicode.IsLetter(first) || unicode.IsSpace(last) || isBoolWord(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsDigit(r) || unicode.IsNumber(r) || unicode.IsControl(r) ||
			r == '"' || r == '\u2028' || r == '\u2029' || r == utf8.RuneError {
			return false
		}
	}
	return true
}

func isBoolWord(s string) bool {
	for _, w := range boolWords {
		if strings.EqualFold(s, w) {
			return true
		}
	}
	return false
}

// pastedText is the text of a cell in the paste and whether the cell can
// be pasted: a blank cell is empty text, a text cell its text when
// pastable; anything else goes as CellData.
func pastedText(cd *sheets.CellData) (string, bool) {
	if cd == nil || cd.UserEnteredFormat != nil {
		return "", cd == nil
	}
	v := cd.UserEnteredValue
	switch {
	case v == nil:
		return "", true
	case v.StringValue != nil && pastable(*v.StringValue):
		return *v.StringValue, true
	}
	return "", false
}

// pasteBlock is the new rows of one tab in one batchUpdate, inserted at
// grid row at (0-based).
type pasteBlock struct {
	sheetID int64
	at      int
	rows    []*sheets.RowData
}

// typedColumns marks the columns holding a cell that cannot be pasted.
func (b pasteBlock) typedColumns() []bool {
	var typed []bool
	for _, rd := range b.rows {
		for c, cd := range rd.Values {
			for len(typed) <= c {
				typed = append(typed, false)
			}
			if _, ok := pastedText(cd); !ok {
				typed[c] = true
			}
		}
	}
	return typed
}

// requests is the block's insertDimension, pasteData (when any column is
// pasted) and one updateCells per run of typed columns.
func (b pasteBlock) requests() []*sheets.Request {
	typed := b.typedColumns()
	reqs := []*sheets.Request{b.insert()}
	if p := b.paste(typed); p != nil {
		reqs = append(reqs, p)
	}
	for c0 := 0; c0 < len(typed); c0++ {
		if !typed[c0] {
			continue
		}
		c1 := c0
		for c1 < len(typed) && typed[c1] {
			c1++
		}
		reqs = append(reqs, b.typedRun(c0, c1))
		c0 = c1
	}
	return reqs
}

func (b pasteBlock) insert() *sheets.Request {
	return &sheets.Request{InsertDimension: &sheets.InsertDimensionRequest{
		Range: &sheets.DimensionRange{SheetId: b.sheetID, Dimension: "ROWS",
			StartIndex: int64(b.at), EndIndex: int64(b.at + len(b.rows))},
		InheritFromBefore: b.at > 1, // below the header: the format of the row after
	}}
}

// paste is the pasteData of the untyped columns (nil when none holds text).
func (b pasteBlock) paste(typed []bool) *sheets.Request {
	var sb strings.Builder
	filled := false
	for i, rd := range b.rows {
		if i > 0 {
			sb.WriteByte('\n')
		}
		line := make([]string, 0, len(rd.Values))
		for c, cd := range rd.Values {
			t := ""
			if !typed[c] {
				t, _ = pastedText(cd)
			}
			line = append(line, t)
		}
		for len(line) > 0 && line[len(line)-1] == "" {
			line = line[:len(line)-1]
		}
		filled = filled || len(line) > 0
		sb.WriteString(strings.Join(line, pasteDelimiter))
	}
	if !filled {
		return nil
	}
	return &sheets.Request{PasteData: &sheets.PasteDataRequest{
		Coordinate: &sheets.GridCoordinate{SheetId: b.sheetID, RowIndex: int64(b.at)},
		Data:       sb.String(), Delimiter: pasteDelimiter, Type: "PASTE_VALUES",
	}}
}

// typedRun writes columns [c0, c1) of every row of the block as CellData.
func (b pasteBlock) typedRun(c0, c1 int) *sheets.Request {
	rows := make([]*sheets.RowData, len(b.rows))
	for i, rd := range b.rows {
		out := &sheets.RowData{Values: make([]*sheets.CellData, 0, c1-c0)}
		for c := c0; c < c1; c++ {
			cd := &sheets.CellData{}
			if c < len(rd.Values) && rd.Values[c] != nil {
				cd = rd.Values[c]
			}
			out.Values = append(out.Values, cd)
		}
		rows[i] = out
	}
	return &sheets.Request{UpdateCells: &sheets.UpdateCellsRequest{
		Range: &sheets.GridRange{SheetId: b.sheetID, StartRowIndex: int64(b.at), EndRowIndex: int64(b.at + len(b.rows)),
			StartColumnIndex: int64(c0), EndColumnIndex: int64(c1)},
		Rows: rows, Fields: valueFields,
	}}
}

// blockSize bounds the JSON size of a pasteBlock as rows join it (chunk):
// per column, the bytes as pasted text and as CellData, and whether any
// cell makes it typed.
type blockSize struct {
	rows         int
	paste, typed []int
	typedColumns []bool
}

func (b *blockSize) clone() *blockSize {
	return &blockSize{rows: b.rows, paste: append([]int(nil), b.paste...), typed: append([]int(nil), b.typed...),
		typedColumns: append([]bool(nil), b.typedColumns...)}
}

func (b *blockSize) add(rd *sheets.RowData) {
	b.rows++
	for c, cd := range rd.Values {
		for len(b.typed) <= c {
			b.paste, b.typed, b.typedColumns = append(b.paste, 0), append(b.typed, 0), append(b.typedColumns, false)
		}
		t, ok := pastedText(cd)
		b.paste[c] += escapedLen(t) + 2 // the delimiter, escaped
		b.typed[c] += cellSize(cd)
		b.typedColumns[c] = b.typedColumns[c] || !ok
	}
}

// size bounds the block's requests' JSON; reqs counts them.
func (b *blockSize) size() (bytes, reqs int) {
	runs := 0
	bytes = 2*(requestOverhead+rangeOverhead) + 2*b.rows // insert, paste, line breaks
	for c, typed := range b.typedColumns {
		if !typed {
			bytes += b.paste[c]
			continue
		}
		bytes += b.typed[c]
		if c == 0 || !b.typedColumns[c-1] {
			runs++
		}
	}
	bytes += runs * (requestOverhead + rangeOverhead + 16*b.rows)
	return bytes, 2 + runs
}
