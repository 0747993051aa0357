package emulator

import (
	"regexp"
	"strings"
)

// localeRules is how typed or pasted text reads in one spreadsheet
// locale: the decimal and grouping separators of numbers, the words of
// the two booleans (TRUE and FALSE read as booleans in every locale), and
// the day-first date form.
type localeRules struct {
	decimal, group string
	yes, no        string
	dayFirst       *regexp.Regexp
}

// locales are the spreadsheet locales whose parsing the emulator models
// beyond en_US (parseTyped); any other locale parses as en_US.
var locales = map[string]localeRules{
	"en_GB": {decimal: ".", group: ",", yes: "TRUE", no: "FALSE", dayFirst: reSlashDMY},
	"de_DE": {decimal: ",", group: ".", yes: "WAHR", no: "FALSCH", dayFirst: reDotDMY},
	"fr_FR": {decimal: ",", group: "\u202f", yes: "VRAI", no: "FAUX", dayFirst: reSlashDMY},
}

// ModelledLocales lists every locale whose paste parsing the emulator
// models, en_US first.
func ModelledLocales() []string { return []string{defaultLocale, "de_DE", "en_GB", "fr_FR"} }

var (
	reSlashDMY = regexp.MustCompile(`^(\d{1,2})/(\d{1,2})/(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)
	reDotDMY   = regexp.MustCompile(`^(\d{1,2})\.(\d{1,2})\.(\d{4})(?: (\d{1,2}):(\d{2})(?::(\d{2}))?)?$`)
)

// parseTypedIn interprets text as the Sheets UI does when a person types
// or pastes it into a spreadsheet of locale: as parseTyped for en_US (and
// any locale not modelled); elsewhere the locale's boolean words, decimal
// and grouping separators and day-first dates apply, and ISO dates and
// times read as everywhere.
func parseTypedIn(s, locale string) cellData {
	lr, ok := locales[locale]
	if !ok {
		return parseTyped(s)
	}
	switch {
	case s == "" || strings.HasPrefix(s, "'") || len(s) > 1 && s[0] == '=':
		return parseTyped(s)
	case strings.EqualFold(s, lr.yes), strings.EqualFold(s, "TRUE"):
		return cellData{Kind: kindBool, Bool: true}
	case strings.EqualFold(s, lr.no), strings.EqualFold(s, "FALSE"):
		return cellData{Kind: kindBool, Bool: false}
	}
	t := strings.TrimSpace(s)
	if c, ok := lr.number(t); ok {
		return c
	}
	if m := lr.dayFirst.FindStringSubmatch(t); m != nil {
		if c, ok := dateCell(atoi(m[3]), atoi(m[2]), atoi(m[1]), m[4:7], "02/01/2006"); ok {
			return c
		}
	}
	if reISO.MatchString(t) {
		if c, ok := parseTypedDate(t); ok {
			return c
		}
	}
	if m := reTime.FindStringSubmatch(t); m != nil {
		if c, ok := timeCell(m); ok {
			return c
		}
	}
	return cellData{Kind: kindString, Str: s}
}

// number reads a number written with the locale's separators: the text is
// rewritten to en_US separators and parsed as parseTypedNumber does. Text
// that carries an en_US separator the locale does not use stays text.
func (lr localeRules) number(s string) (cellData, bool) {
	if lr.decimal == "." {
		return parseTypedNumber(s)
	}
	if lr.group != "." && strings.Contains(s, ".") {
		return cellData{}, false
	}
	r := strings.NewReplacer(lr.group, ",", lr.decimal, ".")
	return parseTypedNumber(r.Replace(s))
}
