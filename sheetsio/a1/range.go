// Package a1 parses and formats Google Sheets A1 notation. Accepted forms:
//
//	Sheet1!A1:B2   Sheet1!A:A   Sheet1!1:2   Sheet1!A5:A   Sheet1!A2:2
//	A1:B2          (no tab: the first visible tab)
//	Sheet1         (a whole tab)
//	'Bob''s Sheet'!A2:F   (quoted title, inner quotes doubled)
//
// Indexes are zero-based and half-open, like the Sheets API GridRange; a
// missing end is Open (to the edge of the grid).
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package a1

import (
	"strconv"
	"strings"
	"unicode"
)

// Open marks an unbounded end of a Range (the grid's last row or column).
const Open = -1

// MaxColumns is the number of columns A1 notation can address (A..ZZZ).
const MaxColumns = 18278

// MaxRows is the largest row number accepted (Google's 10,000,000-cell limit
// makes taller grids impossible).
const MaxRows = 10_000_000

// Range is a parsed A1 range. Sheet is the unquoted tab title (empty when the
// text named no tab). WholeSheet is true when only a tab was named. Rows and
// columns are zero-based; StartRow/StartCol are inclusive, EndRow/EndCol are
// exclusive or Open.
type Range struct {
	Sheet      string
	HasSheet   bool
	WholeSheet bool
	StartRow   int
	StartCol   int
	EndRow     int
	EndCol     int
}

// endpoint is one side of a ':' range: a column, a row, or both.
type endpoint struct {
	col, row int // zero-based; -1 when absent
}

// Parse parses a full A1 range, with or without a tab name. It returns an
// error matching ErrParse for malformed text. A text that is not a cell range
// and has no '!' is taken as a tab name (`Sheet1`); a name that looks like a
// cell (`CO2`) is a cell unless quoted.
func Parse(s string) (Range, error) {
	if s == "" {
		return Range{}, newErr(ErrParse, s, "empty range")
	}
	if s[0] == '\'' {
		return parseQuoted(s)
	}
	if i := strings.LastIndexByte(s, '!'); i >= 0 {
		if i == 0 {
			return Range{}, newErr(ErrParse, s, "empty tab name")
		}
		r, err := ParseCells(s[i+1:])
		if err != nil {
			return wholeSheet(s), nil
		}
		r.Sheet, r.HasSheet = s[:i], true
		return r, nil
	}
	if r, err := ParseCells(s); err == nil {
		return r, nil
	}
	return wholeSheet(s), nil
}

func wholeSheet(name string) Range {
	return Range{Sheet: name, HasSheet: true, WholeSheet: true, EndRow: Open, EndCol: Open}
}

// parseQuoted handles `'name'` and `'name'!cells`, where ” inside the quotes
// is one literal quote.
func parseQuoted(s string) (Range, error) {
	var b strings.Builder
	i := 1
	for {
		j := strings.IndexByte(s[i:], '\'')
		if j < 0 {
			return Range{}, newErr(ErrParse, s, "unterminated quoted tab name")
		}
		b.WriteString(s[i : i+j])
		i += j + 1
		if i < len(s) && s[i] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		break
	}
	name := b.String()
	if name == "" {
		return Range{}, newErr(ErrParse, s, "empty tab name")
	}
	if i == len(s) {
		return wholeSheet(name), nil
	}
	if s[i] != '!' {
		return Range{}, newErr(ErrParse, s, "expected '!' after quoted tab name")
	}
	r, err := ParseCells(s[i+1:])
	if err != nil {
		return Range{}, err
	}
	r.Sheet, r.HasSheet = name, true
	return r, nil
}

// ParseCells parses the part after '!': `A1`, `A1:B2`, `A:B`, `1:2`, `A5:A`,
// `A2:2`. A lone column or row (`A`, `5`) is not a range. Reversed corners
// are normalised (`B2:A1` is `A1:B2`).
func ParseCells(s string) (Range, error) {
	left, right, two := strings.Cut(s, ":")
	a, err := parseEndpoint(left)
	if err != nil {
		return Range{}, newErr(ErrParse, s, err.Error())
	}
	if !two {
		if a.col < 0 || a.row < 0 {
			return Range{}, newErr(ErrParse, s, "a single reference must be a cell")
		}
		return Range{StartRow: a.row, StartCol: a.col, EndRow: a.row + 1, EndCol: a.col + 1}, nil
	}
	b, err := parseEndpoint(right)
	if err != nil {
		return Range{}, newErr(ErrParse, s, err.Error())
	}
	return combine(s, a, b)
}

func combine(s string, a, b endpoint) (Range, error) {
	if (a.col < 0 && b.col >= 0 && b.row < 0) || (a.row < 0 && b.row >= 0 && b.col < 0) {
		return Range{}, newErr(ErrParse, s, "mismatched range ends")
	}
	r := Range{StartRow: max(a.row, 0), StartCol: max(a.col, 0), EndRow: Open, EndCol: Open}
	if b.row >= 0 {
		r.StartRow, r.EndRow = order(r.StartRow, b.row)
	}
	if b.col >= 0 {
		r.StartCol, r.EndCol = order(r.StartCol, b.col)
	}
	return r, nil
}

// order returns the inclusive-exclusive span covering indexes x and y.
func order(x, y int) (int, int) {
	if x > y {
		x, y = y, x
	}
	return x, y + 1
}

func parseEndpoint(s string) (endpoint, error) {
	i := 0
	for i < len(s) && isASCIILetter(s[i]) {
		i++
	}
	ep := endpoint{col: -1, row: -1}
	if i > 0 {
		c, err := ColumnIndex(s[:i])
		if err != nil {
			return ep, err
		}
		ep.col = c
	}
	if i < len(s) {
		r, err := parseRow(s[i:])
		if err != nil {
			return ep, err
		}
		ep.row = r
	}
	if ep.col < 0 && ep.row < 0 {
		return ep, newErr(ErrParse, s, "empty reference")
	}
	return ep, nil
}

func parseRow(s string) (int, error) {
	if len(s) > 9 {
		return 0, newErr(ErrRow, s, "row number too large")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, newErr(ErrParse, s, "bad row number")
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxRows {
		return 0, newErr(ErrRow, s, "row number out of range")
	}
	return n - 1, nil
}

func isASCIILetter(c byte) bool {
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
}

// ColumnIndex converts a column label (`A`, `z`, `AA`, up to `ZZZ`,
// case-insensitive) to its zero-based index. Errors match ErrColumn.
func ColumnIndex(label string) (int, error) {
	if label == "" || len(label) > 3 {
		return 0, newErr(ErrColumn, label, "column label must be 1-3 letters")
	}
	n := 0
	for i := 0; i < len(label); i++ {
		c := label[i]
		if !isASCIILetter(c) {
			return 0, newErr(ErrColumn, label, "column label must be letters")
		}
		n = n*26 + int(unicode.ToUpper(rune(c))-'A') + 1
	}
	return n - 1, nil
}

// ColumnLabel converts a zero-based column index to its label (0 → "A",
// 26 → "AA"). It returns "" for an index outside [0, MaxColumns).
func ColumnLabel(index int) string {
	if index < 0 || index >= MaxColumns {
		return ""
	}
	var buf [3]byte
	i := len(buf)
	for n := index + 1; n > 0; n = (n - 1) / 26 {
		i--
		buf[i] = byte('A' + (n-1)%26)
	}
	return string(buf[i:])
}

// CellLabel formats a zero-based row and column as a cell (`B3`).
func CellLabel(row, col int) string {
	return ColumnLabel(col) + strconv.Itoa(row+1)
}
