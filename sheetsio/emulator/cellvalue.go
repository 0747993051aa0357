package emulator

import (
	"encoding/json"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Number-format classes implied by typed input (USER_ENTERED).
const (
	fmtDate     = "DATE"
	fmtTime     = "TIME"
	fmtDateTime = "DATE_TIME"
	fmtPercent  = "PERCENT"
	fmtCurrency = "CURRENCY"
	fmtGrouped  = "NUMBER_GROUPED"
)

// serialEpoch is day 0 of Google's serial dates (days from 1899-12-30).
var serialEpoch = time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)

// Value input and render options of the values API.
const (
	inputRaw         = "RAW"
	inputUserEntered = "USER_ENTERED"
	renderFormatted  = "FORMATTED_VALUE"
	renderUnformat   = "UNFORMATTED_VALUE"
	renderFormula    = "FORMULA"
	dtSerial         = "SERIAL_NUMBER"
	dtFormatted      = "FORMATTED_STRING"
)

// cellFromInput converts one JSON value of a ValueRange to a cell. skip is
// true for null (the cell is left unchanged). Errors: a value that is an
// object or list, or a string over 50,000 characters.
func cellFromInput(v any, userEntered bool, r, c int) (cell cellData, skip bool, err error) {
	switch x := v.(type) {
	case nil:
		return cellData{}, true, nil
	case string:
		if utf8.RuneCountInString(x) > maxCellChars {
			return cellData{}, false, tooManyChars()
		}
		if userEntered {
			return parseTyped(x), false, nil
		}
		if x == "" {
			return cellData{}, false, nil
		}
		return cellData{Kind: kindString, Str: x}, false, nil
	case json.Number:
		f, perr := strconv.ParseFloat(string(x), 64)
		if perr != nil {
			// The message names the position, never the value (cell data).
			return cellData{}, false, errorf(ErrInvalidArgument, "Invalid values[%d][%d]: not a finite number", r, c)
		}
		return cellData{Kind: kindNumber, Num: f}, false, nil
	case float64:
		return cellData{Kind: kindNumber, Num: x}, false, nil
	case bool:
		return cellData{Kind: kindBool, Bool: x}, false, nil
	case map[string]any:
		return cellData{}, false, errorf(ErrInvalidArgument, "Invalid values[%d][%d]: struct_value", r, c)
	default:
		return cellData{}, false, errorf(ErrInvalidArgument, "Invalid values[%d][%d]: list_value", r, c)
	}
}

// tooManyChars is Google's answer to a cell over the 50,000-character limit.
func tooManyChars() error {
	return errorf(ErrInvalidArgument, "Your input contains more than the maximum of %d characters in a single cell.", maxCellChars)
}

var (
	reNumber = regexp.MustCompile(`^[+-]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$`)
	reISO    = regexp.MustCompile(`^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)
	reUSDate = regexp.MustCompile(`^(\d{1,2})/(\d{1,2})/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)
	reTime   = regexp.MustCompile(`^(\d{1,2}):(\d{2})(?::(\d{2}))?(?: ?([AaPp][Mm]))?$`)
)

// parseTyped interprets text the way the Sheets UI does for typed input:
// leading ' forces text, '=' starts a formula, TRUE/FALSE are booleans,
// numbers (with thousands separators, %, $) and en_US dates/times become
// numbers with an implied format, anything else is text.
func parseTyped(s string) cellData {
	switch {
	case s == "":
		return cellData{}
	case strings.HasPrefix(s, "'"):
		if len(s) == 1 {
			return cellData{}
		}
		return cellData{Kind: kindString, Str: s[1:]}
	case len(s) > 1 && s[0] == '=':
		return cellData{Kind: kindFormula, Str: s}
	case strings.EqualFold(s, "TRUE"), strings.EqualFold(s, "FALSE"):
		return cellData{Kind: kindBool, Bool: strings.EqualFold(s, "TRUE")}
	}
	if c, ok := parseTypedNumber(strings.TrimSpace(s)); ok {
		return c
	}
	if c, ok := parseTypedDate(strings.TrimSpace(s)); ok {
		return c
	}
	return cellData{Kind: kindString, Str: s}
}

func parseTypedNumber(s string) (cellData, bool) {
	f := ""
	if strings.HasSuffix(s, "%") {
		s, f = strings.TrimSuffix(s, "%"), fmtPercent
	} else if strings.HasPrefix(s, "$") || strings.HasPrefix(s, "-$") {
		s, f = strings.Replace(s, "$", "", 1), fmtCurrency
	}
	if !reNumber.MatchString(s) || !strings.ContainsAny(s, "0123456789") {
		return cellData{}, false
	}
	n, err := strconv.ParseFloat(strings.ReplaceAll(s, ",", ""), 64)
	if err != nil || math.IsInf(n, 0) {
		return cellData{}, false
	}
	if f == fmtPercent {
		n /= 100
	}
	if f == "" && strings.Contains(s, ",") {
		f = fmtGrouped
	}
	return cellData{Kind: kindNumber, Num: n, Fmt: f}, true
}

func parseTypedDate(s string) (cellData, bool) {
	if m := reISO.FindStringSubmatch(s); m != nil {
		sep := s[4:5]
		return dateCell(atoi(m[1]), atoi(m[2]), atoi(m[3]), m[4:7], "2006"+sep+"01"+sep+"02")
	}
	if m := reUSDate.FindStringSubmatch(s); m != nil {
		return dateCell(atoi(m[3]), atoi(m[1]), atoi(m[2]), m[4:7], "1/2/2006")
	}
	if m := reTime.FindStringSubmatch(s); m != nil {
		return timeCell(m)
	}
	return cellData{}, false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func dateCell(y, mo, d int, hms []string, layout string) (cellData, bool) {
	t := time.Date(y, time.Month(mo), d, 0, 0, 0, 0, time.UTC)
	if mo < 1 || mo > 12 || t.Day() != d {
		return cellData{}, false
	}
	serial := float64(t.UnixMilli()-serialEpoch.UnixMilli()) / 86_400_000 // no time.Duration: it overflows past ~292 years
	if hms[0] == "" {
		return cellData{Kind: kindNumber, Num: serial, Fmt: fmtDate, FmtPat: layout}, true
	}
	h, mi, sec := atoi(hms[0]), atoi(hms[1]), atoi(hms[2])
	if h > 23 || mi > 59 || sec > 59 {
		return cellData{}, false
	}
	serial += float64(h*3600+mi*60+sec) / 86400
	return cellData{Kind: kindNumber, Num: serial, Fmt: fmtDateTime, FmtPat: layout + " 15:04:05"}, true
}

func timeCell(m []string) (cellData, bool) {
	h, mi, sec := atoi(m[1]), atoi(m[2]), atoi(m[3])
	layout := "15:04:05"
	if ampm := strings.ToUpper(m[4]); ampm != "" {
		if h < 1 || h > 12 {
			return cellData{}, false
		}
		h %= 12
		if ampm == "PM" {
			h += 12
		}
		layout = "3:04:05 PM"
	}
	if h > 23 || mi > 59 || sec > 59 {
		return cellData{}, false
	}
	return cellData{Kind: kindNumber, Num: float64(h*3600+mi*60+sec) / 86400, Fmt: fmtTime, FmtPat: layout}, true
}

// serialTime converts a serial date to a UTC time (millisecond precision).
// It counts in Unix milliseconds, not a time.Duration, which overflows past
// about 292 years from the epoch (years 0001 and 9999 are serials
// -693,593 and 2,958,465).
func serialTime(serial float64) time.Time {
	ms := int64(math.Round(serial * 86400 * 1000))
	return time.UnixMilli(serialEpoch.UnixMilli() + ms).UTC()
}

// formatNumber renders a number the way the Sheets automatic format would,
// honouring an implied date/time/percent/currency format.
func formatNumber(x float64, f, pat string) string {
	switch f {
	case fmtDate, fmtDateTime, fmtTime:
		if pat == "" {
			pat = "1/2/2006"
		}
		return serialTime(x).Format(pat)
	case fmtPercent:
		return formatGeneral(x*100) + "%"
	case fmtCurrency:
		s := "$" + groupThousands(strconv.FormatFloat(math.Abs(x), 'f', 2, 64))
		if x < 0 {
			return "-" + s
		}
		return s
	case fmtGrouped:
		s := groupThousands(formatGeneral(math.Abs(x)))
		if x < 0 {
			return "-" + s
		}
		return s
	}
	return formatGeneral(x)
}

// formatGeneral: integers print in full below 1e15, larger or tiny
// magnitudes in scientific notation ("1.23457E+18"), other numbers rounded
// to 15 significant digits and at most 10 decimals, trailing zeros trimmed.
func formatGeneral(x float64) string {
	if x == 0 {
		return "0"
	}
	ax := math.Abs(x)
	if ax >= 1e15 || ax < 1e-9 {
		s := strconv.FormatFloat(x, 'E', 5, 64)
		mant, exp, _ := strings.Cut(s, "E")
		if strings.Contains(mant, ".") {
			mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
		}
		return mant + "E" + exp
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 15, 64), 64)
	s := strconv.FormatFloat(r, 'f', 10, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

func groupThousands(s string) string {
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, ch := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	if frac != "" {
		b.WriteString("." + frac)
	}
	return b.String()
}
