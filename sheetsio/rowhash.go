package sheetsio

import (
	"sort"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
	"golang.org/x/text/unicode/norm"
)

// ExpectedRowHash returns the full-row visible hash of the row the provider
// writes for an append of values with anchor on tab spec — the ExpectedHash
// a later OpUpdate/OpDelete of that row passes when nothing changed it.
// Values are typed Go values as in Op.Values; a value Sheets cannot hold
// counts as its marker, as the provider writes it. Errors: *Error
// CodeInvalidBatch for a column the tab does not have.
func ExpectedRowHash(spec layout.TabSpec, anchor string, values map[string]any) (string, error) {
	if spec.Anchor < 0 {
		return "", newErr(CodeInvalidBatch, nil, "tab %s has no anchor", spec.Name)
	}
	row := make([]any, len(spec.Columns))
	if _, _, err := EncodeValues(spec, values, row); err != nil {
		return "", err
	}
	row[spec.Anchor] = norm.NFC.String(anchor)
	return spec.RowHash(row), nil
}

// MarkedCells lists, by column, the values of an op on tab spec that the
// provider writes as markers (see OpResult.Marked): what a probe that
// proves an op applied reports without a dispatch result. Columns the tab
// does not have are left out.
func MarkedCells(spec layout.TabSpec, values map[string]any) []MarkedCell {
	var out []MarkedCell
	for _, name := range sortedNames(values) {
		c := spec.ColumnIndex(name)
		if c < 0 {
			continue
		}
		if m := cell.MarkOf(spec.Columns[c].Kind, values[name]); m != nil {
			out = append(out, MarkedCell{Column: name, Mark: *m})
		}
	}
	return out
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// EncodeValues encodes op values into row (one cell per column of spec)
// and returns the indexes of the columns written, in ascending order. A
// value Sheets cannot hold (over 50,000 characters, NaN, …) is written as
// its marker (cell.Mark) and listed in marked, by column: the rest of the
// row is still written, and the same marker every time keeps row hashes
// stable. Errors: *Error CodeInvalidBatch for a column the tab does not
// have, or its anchor column (marked then lists the markers written so far).
func EncodeValues(spec layout.TabSpec, values map[string]any, row []any) (cols []int, marked []MarkedCell, err error) {
	cols = make([]int, 0, len(values))
	for name, v := range values {
		c := spec.ColumnIndex(name)
		if c < 0 || c == spec.Anchor {
			return nil, marked, newErr(CodeInvalidBatch, nil, "column %s not in tab %s", name, spec.Name)
		}
		enc, mark := cell.EncodeOrMark(spec.Columns[c].Kind, v)
		if mark != nil {
			marked = append(marked, MarkedCell{Column: name, Mark: *mark})
		}
		row[c] = enc
		cols = append(cols, c)
	}
	sort.Ints(cols)
	return cols, marked, nil
}
