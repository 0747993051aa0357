package emulator

import (
	"strings"
)

// numberFormatIn is CellFormat.numberFormat as a request carries it.
type numberFormatIn struct {
	Type    string `json:"type"`
	Pattern string `json:"pattern"`
}

// cellFormatIn is the part of userEnteredFormat the emulator honours.
type cellFormatIn struct {
	NumberFormat *numberFormatIn `json:"numberFormat"`
}

// formatMasked reports whether mask covers userEnteredFormat.numberFormat.
func formatMasked(mask map[string]bool) bool {
	return mask["*"] || mask["userEnteredFormat"] || mask["userEnteredFormat.numberFormat"] ||
		mask["userEnteredFormat.numberFormat.type"] || mask["userEnteredFormat.numberFormat.pattern"]
}

// applyNumberFormat sets (or, when the request has none, clears) the number
// format of cd as Sheets does for a masked userEnteredFormat.numberFormat:
// date, time and date-time types render with their pattern; other types
// render as the automatic format.
func applyNumberFormat(cd *cellData, f *cellFormatIn) {
	cd.Fmt, cd.FmtPat = "", ""
	if f == nil || f.NumberFormat == nil {
		return
	}
	switch t := f.NumberFormat.Type; t {
	case fmtDate, fmtTime, fmtDateTime:
		cd.Fmt, cd.FmtPat = t, goLayout(f.NumberFormat.Pattern, t)
	case fmtPercent, fmtCurrency:
		cd.Fmt = t
	}
}

// defaultLayouts render a date/time type given without a pattern (the
// en-US locale's defaults).
var defaultLayouts = map[string]string{fmtDate: "1/2/2006", fmtTime: "3:04:05 PM", fmtDateTime: "1/2/2006 15:04:05"}

// goLayout translates a Sheets date/time pattern (yyyy, yy, mmmm, mmm, mm,
// m, dd, d, hh, h, ss, .000, am/pm) into a Go time layout. "m"/"mm" is
// minutes right after an hour or before seconds, months otherwise, as in
// Sheets.
func goLayout(pattern, typ string) string {
	if pattern == "" {
		return defaultLayouts[typ]
	}
	toks := tokenize(strings.ToLower(pattern))
	var b strings.Builder
	for i, tk := range toks {
		b.WriteString(layoutOf(toks, i, tk))
	}
	return b.String()
}

// tokenize splits a pattern into runs of one letter, ".000"-style fractions
// and single other characters.
func tokenize(p string) []string {
	var out []string
	for i := 0; i < len(p); {
		j := i + 1
		switch {
		case strings.HasPrefix(p[i:], "am/pm"):
			j = i + 5
		case p[i] == '.' && j < len(p) && p[j] == '0':
			for j < len(p) && p[j] == '0' {
				j++
			}
		case isPatternLetter(p[i]):
			for j < len(p) && p[j] == p[i] {
				j++
			}
		}
		out = append(out, p[i:j])
		i = j
	}
	return out
}

func isPatternLetter(c byte) bool { return strings.IndexByte("ymdhs", c) >= 0 }

var tokenLayouts = map[string]string{
	"yyyy": "2006", "yy": "06", "mmmm": "January", "mmm": "Jan", "dd": "02", "d": "2",
	"hh": "15", "h": "15", "ss": "05", "s": "5", "am/pm": "PM",
}

func layoutOf(toks []string, i int, tk string) string {
	if tk == "m" || tk == "mm" {
		if minuteContext(toks, i) {
			return map[string]string{"m": "4", "mm": "04"}[tk]
		}
		return map[string]string{"m": "1", "mm": "01"}[tk]
	}
	if strings.HasPrefix(tk, ".0") {
		return "." + strings.Repeat("0", len(tk)-1)
	}
	if l, ok := tokenLayouts[tk]; ok {
		return l
	}
	return tk
}

// minuteContext: the nearest letter token before is an hour, or the
// nearest after is seconds.
func minuteContext(toks []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if isPatternLetter(toks[j][0]) {
			if toks[j][0] == 'h' {
				return true
			}
			break
		}
	}
	for j := i + 1; j < len(toks); j++ {
		if isPatternLetter(toks[j][0]) {
			return toks[j][0] == 's'
		}
	}
	return false
}
