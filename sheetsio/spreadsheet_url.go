package sheetsio

import (
	"net/url"
	"regexp"
	"strings"
)

var spreadsheetIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{10,}$`)

// ParseSpreadsheetURL extracts the spreadsheet id from a Google Sheets URL of
// the form https://docs.google.com/spreadsheets/d/<id>[/...][?...][#...].
// A bare id (letters, digits, '-', '_', at least 10 characters) is accepted
// as is. Anything else is an *Error with Code CodeInvalidSpreadsheetURL; the
// message never repeats the input.
func ParseSpreadsheetURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	if spreadsheetIDPattern.MatchString(s) {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host != "docs.google.com" {
		return "", newErr(CodeInvalidSpreadsheetURL, nil, "expected https://docs.google.com/spreadsheets/d/<id>/... or a bare id (10 or more letters, digits, - or _)")
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	for i := 0; i+2 < len(parts); i++ {
		if parts[i] == "spreadsheets" && parts[i+1] == "d" && spreadsheetIDPattern.MatchString(parts[i+2]) {
			return parts[i+2], nil
		}
	}
	return "", newErr(CodeInvalidSpreadsheetURL, nil, "no /spreadsheets/d/<id> path in the URL")
}
