package emulator

import "github.com/hikoutei/hikoutei-go/sheetsio/a1"

// renderOpts are the read options of the values API.
type renderOpts struct {
	Value    string // FORMATTED_VALUE (default) | UNFORMATTED_VALUE | FORMULA
	DateTime string // SERIAL_NUMBER (default) | FORMATTED_STRING
	Major    string // ROWS (default) | COLUMNS
}

func (o renderOpts) normalized() (renderOpts, error) {
	if o.Value == "" {
		o.Value = renderFormatted
	}
	if o.DateTime == "" {
		o.DateTime = dtSerial
	}
	if o.Major == "" || o.Major == "DIMENSION_UNSPECIFIED" {
		o.Major = "ROWS"
	}
	switch {
	case o.Value != renderFormatted && o.Value != renderUnformat && o.Value != renderFormula:
		return o, errorf(ErrInvalidArgument, "Invalid value at 'value_render_option' (%s)", o.Value)
	case o.DateTime != dtSerial && o.DateTime != dtFormatted:
		return o, errorf(ErrInvalidArgument, "Invalid value at 'date_time_render_option' (%s)", o.DateTime)
	case o.Major != "ROWS" && o.Major != "COLUMNS":
		return o, errorf(ErrInvalidArgument, "Invalid value at 'major_dimension' (%s)", o.Major)
	}
	return o, nil
}

// display is what the cell shows in the UI (FORMATTED_VALUE).
func display(v effective) string {
	switch v.Kind {
	case kindNumber:
		return formatNumber(v.Num, v.Fmt, v.FmtPat)
	case kindBool:
		if v.Bool {
			return "TRUE"
		}
		return "FALSE"
	case kindError:
		return errorDisplay[v.ErrType]
	}
	return v.Str
}

func isDateFmt(f string) bool {
	return f == fmtDate || f == fmtTime || f == fmtDateTime
}

// renderValue renders one cell for the values API.
func renderValue(cd cellData, v effective, o renderOpts) any {
	if o.Value == renderFormula && cd.Kind == kindFormula {
		return cd.Str
	}
	if o.Value == renderFormatted {
		return display(v)
	}
	switch v.Kind {
	case kindNumber:
		if isDateFmt(v.Fmt) && o.DateTime == dtFormatted {
			return display(v)
		}
		return v.Num
	case kindBool:
		return v.Bool
	case kindError:
		return errorDisplay[v.ErrType]
	}
	return v.Str
}

// readGrid renders g as the values API does: trailing empty cells and rows
// omitted, interior empty rows as []. It returns nil when the range is empty.
func (b *book) readGrid(s *sheet, g gridRange, o renderOpts) [][]any {
	b.noteRead(s, g)
	outer, inner := g.rows(), g.cols()
	if o.Major == "COLUMNS" {
		outer, inner = inner, outer
	}
	var out [][]any
	last := -1
	for i := 0; i < outer; i++ {
		line := b.readLine(s, g, o, i, inner)
		out = append(out, line)
		if len(line) > 0 {
			last = i
		}
		if o.Major == "ROWS" && g.R0+i >= len(s.Rows) {
			break
		}
	}
	if last < 0 {
		return nil
	}
	return out[:last+1]
}

func (b *book) readLine(s *sheet, g gridRange, o renderOpts, i, inner int) []any {
	line := []any{}
	lastFilled := -1
	for j := 0; j < inner; j++ {
		r, c := g.R0+i, g.C0+j
		if o.Major == "COLUMNS" {
			r, c = g.R0+j, g.C0+i
		}
		if o.Major == "ROWS" && (r >= len(s.Rows) || c >= len(s.Rows[r])) {
			break
		}
		cd := s.cell(r, c)
		if !cd.hasValue() {
			line = append(line, "")
			continue
		}
		v := b.effectiveOf(s, r, c)
		line = append(line, renderValue(cd, v, o))
		if v.Kind != kindEmpty && !(v.Kind == kindString && v.Str == "") {
			lastFilled = j
		}
	}
	return line[:lastFilled+1]
}

// displayedTab returns every row of the tab as displayed strings, trailing
// empties trimmed per row and trailing empty rows dropped.
func (b *book) displayedTab(s *sheet) [][]string {
	return b.displayedRows(s, s.RowCount)
}

// displayedRows is displayedTab limited to the first maxRows rows.
func (b *book) displayedRows(s *sheet, maxRows int) [][]string {
	g := gridRange{SheetID: s.ID, R0: 0, R1: min(s.RowCount, maxRows), C0: 0, C1: s.ColCount}
	rows := b.readGrid(s, g, renderOpts{Value: renderFormatted, DateTime: dtSerial, Major: "ROWS"})
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = make([]string, len(r))
		for j, v := range r {
			out[i][j], _ = v.(string)
		}
	}
	return out
}

// quoteForMessage formats a tab title and cells for error messages the way
// Google does: the title quoted only when needed ("Range (Solar!Y1) …",
// "Range ('My Tab'!A1001) …"), the cells as requested.
func quoteForMessage(title, cells string) string {
	q := a1.QuoteSheet(title)
	if cells == "" {
		return q
	}
	return q + "!" + cells
}
