package cell

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Adopting a tab people kept before the store existed (hikoutei adopt)
// decodes every cell with the rules of polling (DecodeObserved) and two
// additions, each for a value people commonly keep in a form the store
// never writes:
//
//   - A date or date-time kept as TEXT in a time column is accepted in one
//     of the ISO 8601 forms ParseDateText lists, nothing else: 01/03/2024
//     means the first of March to some and the third of January to others,
//     so it is never guessed (ReasonDateText). A date a person typed in the
//     Sheets UI is a number (a serial) and decodes as polling decodes it.
//   - With numbersAsText, a NUMBER in a text column (ids people typed as
//     numbers) is adopted as its decimal text: an integer within ±(2^53-1)
//     only (123 → "123"); anything else stays ReasonTypeMismatch. Off by
//     default: a number in a text column may be a value whose leading
//     zeros Sheets already dropped, so it is adopted only when asked.
//
// Everything else — formulas, error values and merged cells (never
// imported), big integers, leading zeros kept as text, NFC, edge spaces
// in keys — is exactly DecodeObserved.
func DecodeAdopted(col Column, o Observed, numbersAsText bool) (any, error) {
	v, err := DecodeObserved(col, o)
	var me *MalformedError
	if err == nil || !errors.As(err, &me) || me.Reason != ReasonTypeMismatch {
		return v, err
	}
	switch raw := o.Value.(type) {
	case string:
		if col.Kind == Time {
			return decodeDateText(raw)
		}
	case float64:
		if col.Kind == String && numbersAsText && raw == math.Trunc(raw) && math.Abs(raw) <= maxExactInt {
			return strconv.FormatInt(int64(raw), 10), nil
		}
	}
	return nil, err
}

func decodeDateText(s string) (any, error) {
	t, ok := ParseDateText(s)
	if !ok {
		return nil, malformed(Time, ReasonDateText)
	}
	return t, nil
}

// dateText is the grammar of ParseDateText: a date, optionally a time of
// day (minutes, optionally seconds, optionally 1–3 fractional digits) after
// "T" or one space, optionally a zone ("Z" or ±hh:mm) after the time.
var dateText = regexp.MustCompile(`^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?(Z|[+-]\d{2}:\d{2})?)?$`)

// ParseDateText reads a date kept as text, after trimming white space
// around it. The accepted forms (ISO 8601; a time without a zone is UTC,
// as the store's own time cells are):
//
//	2024-03-01                  midnight UTC
//	2024-03-01 14:30            (also with "T" for the space)
//	2024-03-01 14:30:05
//	2024-03-01 14:30:05.250     at most 3 fractional digits (milliseconds)
//	2024-03-01T14:30:05Z        a zone: Z or ±hh:mm, after a time only
//	2024-03-01T14:30:05+09:00
//
// A date that does not exist (2024-02-30), an hour past 23, a year
// outside 0001–9999, or any other form (01/03/2024, 2024/03/01,
// "1 March 2024", more than 3 fractional digits) is refused (ok false).
// The result is UTC at millisecond precision (CanonicalTime).
func ParseDateText(s string) (t time.Time, ok bool) {
	m := dateText.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}, false
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	ms := 0
	if m[7] != "" {
		ms, _ = strconv.Atoi((m[7] + "00")[:3])
	}
	loc, ok := zone(m[8])
	if !ok {
		return time.Time{}, false
	}
	t = time.Date(n(1), time.Month(n(2)), n(3), n(4), n(5), n(6), ms*int(time.Millisecond), loc)
	if t.Year() != n(1) || int(t.Month()) != n(2) || t.Day() != n(3) || t.Hour() != n(4) || t.Minute() != n(5) || t.Second() != n(6) {
		return time.Time{}, false // normalised: the text named no real instant (2024-02-30, 24:00)
	}
	t = CanonicalTime(t)
	return t, t.Year() >= 1 && t.Year() <= 9999
}

// zone reads "", "Z" or ±hh:mm (hours ≤ 23, minutes ≤ 59).
func zone(z string) (*time.Location, bool) {
	if z == "" || z == "Z" {
		return time.UTC, true
	}
	h, _ := strconv.Atoi(z[1:3])
	m, _ := strconv.Atoi(z[4:6])
	if h > 23 || m > 59 {
		return nil, false
	}
	off := (h*60 + m) * 60
	if z[0] == '-' {
		off = -off
	}
	return time.FixedZone(z, off), true
}
