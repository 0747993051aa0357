package a1

import (
	"strconv"
	"strings"
	"unicode"
)

// NeedsQuotes reports whether a tab title must be single-quoted in A1
// notation: it is empty, contains anything but letters, digits and '_',
// starts with a digit, or could be read as a cell or R1C1 reference.
func NeedsQuotes(title string) bool {
	if title == "" {
		return true
	}
	for i, r := range title {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return true
		}
		if i == 0 && unicode.IsDigit(r) {
			return true
		}
	}
	if _, err := ParseCells(title); err == nil {
		return true
	}
	return looksCell(title) || looksR1C1(title)
}

// looksCell reports a cell-shaped title even when its row is out of range
// (`A0`, `B99999999`): a reader may still take it for a cell, and quoting
// is always allowed.
func looksCell(s string) bool {
	i := 0
	for i < len(s) && isASCIILetter(s[i]) {
		i++
	}
	return i >= 1 && i <= 3 && i < len(s) && allDigits(s[i:])
}

func looksR1C1(s string) bool {
	u := strings.ToUpper(s)
	if u == "R" || u == "C" {
		return true
	}
	if !strings.HasPrefix(u, "R") {
		return strings.HasPrefix(u, "C") && allDigits(u[1:])
	}
	rest := u[1:]
	i := strings.IndexByte(rest, 'C')
	if i < 0 {
		return allDigits(rest)
	}
	return allDigits(rest[:i]) && allDigits(rest[i+1:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// QuoteSheet returns the tab title as written in A1 notation: unchanged when
// no quotes are needed, otherwise wrapped in ' with inner quotes doubled.
func QuoteSheet(title string) string {
	if !NeedsQuotes(title) {
		return title
	}
	return "'" + strings.ReplaceAll(title, "'", "''") + "'"
}

// Cells formats the cell part of r (no tab): `A1`, `A1:B2`, `A:B`, `1:2`,
// `A5:B`, `B2:2`. A whole-tab range formats as "".
func (r Range) Cells() string {
	rowsOpen, colsOpen := r.EndRow == Open, r.EndCol == Open
	switch {
	case rowsOpen && colsOpen:
		if r.StartRow == 0 && r.StartCol == 0 {
			return ""
		}
		return CellLabel(r.StartRow, r.StartCol) + ":" + ColumnLabel(MaxColumns-1)
	case rowsOpen:
		start := ColumnLabel(r.StartCol)
		if r.StartRow > 0 {
			start = CellLabel(r.StartRow, r.StartCol)
		}
		return start + ":" + ColumnLabel(r.EndCol-1)
	case colsOpen:
		start := strconv.Itoa(r.StartRow + 1)
		if r.StartCol > 0 {
			start = CellLabel(r.StartRow, r.StartCol)
		}
		return start + ":" + strconv.Itoa(r.EndRow)
	}
	first := CellLabel(r.StartRow, r.StartCol)
	if r.EndRow-r.StartRow == 1 && r.EndCol-r.StartCol == 1 {
		return first
	}
	return first + ":" + CellLabel(r.EndRow-1, r.EndCol-1)
}

// String formats r as A1 notation, quoting the tab title only when needed.
func (r Range) String() string {
	cells := r.Cells()
	if !r.HasSheet {
		return cells
	}
	if cells == "" {
		return QuoteSheet(r.Sheet)
	}
	return QuoteSheet(r.Sheet) + "!" + cells
}

// Bound resolves Open ends against a grid of rows × cols and checks that the
// range fits. The result has concrete ends and WholeSheet false. An error
// matching ErrGrid reports a range outside the grid.
func (r Range) Bound(rows, cols int) (Range, error) {
	b := r
	b.WholeSheet = false
	if b.EndRow == Open {
		b.EndRow = rows
	}
	if b.EndCol == Open {
		b.EndCol = cols
	}
	if b.StartRow < 0 || b.StartCol < 0 || b.EndRow > rows || b.EndCol > cols || b.StartRow >= b.EndRow || b.StartCol >= b.EndCol {
		return r, newErr(ErrGrid, r.String(), "range exceeds grid limits")
	}
	return b, nil
}

// Format returns the range Google echoes for r on a grid of rows × cols:
// quotes dropped when needless, open ends bounded (`A1:C` → `A1:C1000`).
// The tab title is the one given (the tab's real title).
func Format(title string, r Range, rows, cols int) (string, error) {
	b, err := r.Bound(rows, cols)
	if err != nil {
		return "", err
	}
	b.Sheet, b.HasSheet = title, true
	return b.String(), nil
}

// Rows is the number of rows of a bounded range (0 when open).
func (r Range) Rows() int {
	if r.EndRow == Open {
		return 0
	}
	return r.EndRow - r.StartRow
}

// Cols is the number of columns of a bounded range (0 when open).
func (r Range) Cols() int {
	if r.EndCol == Open {
		return 0
	}
	return r.EndCol - r.StartCol
}
