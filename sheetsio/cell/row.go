package cell

import (
	"errors"
)

// Observed is one cell as seen through grid data (spreadsheets.get with
// includeGridData), which unlike a values read can tell a typed value from a
// formula's result, an error value or a merged cell.
//
// Value is the effective value (string, float64, bool or nil); Formula is the
// user-entered formula text ("" if none); ErrorType is the error value's type
// ("" if none); Merged is true when the cell lies in a merged range.
type Observed struct {
	Value     any
	Formula   string
	ErrorType string
	Merged    bool
}

// DecodeObserved decodes a grid-data cell. A formula (the system never writes
// one), an error value or a merged cell is malformed with ReasonFormula,
// ReasonErrorValue or ReasonMerged respectively, and its computed result is
// never returned (C03). Otherwise it is Decode(col, o.Value).
func DecodeObserved(col Column, o Observed) (any, error) {
	switch {
	case o.Formula != "":
		return nil, malformed(col.Kind, ReasonFormula)
	case o.ErrorType != "":
		return nil, malformed(col.Kind, ReasonErrorValue)
	case o.Merged:
		return nil, malformed(col.Kind, ReasonMerged)
	}
	return Decode(col, o.Value)
}

// PadRow returns raw extended with nil to width cells (the API omits trailing
// empty cells, C04). A row longer than width is returned unchanged; callers
// report cells beyond the header width separately.
func PadRow(raw []any, width int) []any {
	if len(raw) >= width {
		return raw
	}
	out := make([]any, width)
	copy(out, raw)
	return out
}

// DecodeRow decodes one row read from a tab whose columns are cols, padding
// it to len(cols) first (C04) and ignoring cells beyond len(cols).
// It returns one value per column; a malformed cell decodes to nil and
// contributes a *MalformedError (with Column and Index set) to the returned
// error, which is an errors.Join of all of them (errors.Is ErrMalformed).
func DecodeRow(cols []Column, raw []any) ([]any, error) {
	raw = PadRow(raw, len(cols))
	out := make([]any, len(cols))
	var errs []error
	for i, c := range cols {
		v, err := Decode(c, raw[i])
		if err != nil {
			var me *MalformedError
			if errors.As(err, &me) {
				me.Column, me.Index = c.Name, i
			}
			errs = append(errs, err)
			continue
		}
		out[i] = v
	}
	return out, errors.Join(errs...)
}

// EncodeRow encodes one value per column with Encode; values must have
// len(cols) entries. The first failure is returned as an *EncodeError.
func EncodeRow(cols []Column, values []any) ([]any, error) {
	if len(values) != len(cols) {
		return nil, unencodable("", ReasonUnsupportedValue)
	}
	out := make([]any, len(cols))
	for i, c := range cols {
		v, err := Encode(c.Kind, values[i])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}
