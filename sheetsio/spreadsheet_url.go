package sheetsio

import (
	"net/url"
	"regexp"
	"strings"
)

// spreadsheetIDPattern is a spreadsheet id: letters, digits, '-' and '_'.
// There is no length rule: Google's ids are 44 characters, an emulator's
// may be as short as one.
var spreadsheetIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// acceptedForms is what every refusal says is accepted.
const acceptedForms = "give https://docs.google.com/spreadsheets/d/<id>/... or a bare id (letters, digits, - or _)"

// ParseSpreadsheetURL extracts the spreadsheet id from s, with the
// whitespace around it ignored:
//   - a bare id (letters, digits, '-' and '_', of any length) as is;
//   - a Google Sheets URL, https://docs.google.com/spreadsheets/d/<id>
//     with anything after it (/edit, ?usp=…, #gid=…), also written
//     without https://, or with the account segment /u/N/ that Google
//     adds after /spreadsheets.
//
// Anything else is an *Error with Code CodeInvalidSpreadsheetURL, whose
// message never repeats the input: an empty value, a value holding any
// other character (a space, '.', ':', '/'), another host or scheme, and a
// published-to-the-web URL (/d/e/…), which does not carry the id.
func ParseSpreadsheetURL(s string) (string, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return "", newErr(CodeInvalidSpreadsheetURL, nil, "empty: "+acceptedForms)
	case spreadsheetIDPattern.MatchString(s):
		return s, nil
	case strings.HasPrefix(s, "docs.google.com/"):
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host != "docs.google.com" {
		return "", newErr(CodeInvalidSpreadsheetURL, nil, "expected a Google Sheets URL or a spreadsheet id: "+acceptedForms)
	}
	return idInPath(u.Path)
}

// idInPath is the id in a docs.google.com path: the segment after
// /spreadsheets/d/ (or /spreadsheets/u/N/d/).
func idInPath(path string) (string, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, p := range parts {
		if p != "spreadsheets" {
			continue
		}
		rest := parts[i+1:]
		if len(rest) >= 4 && rest[0] == "u" {
			rest = rest[2:]
		}
		switch {
		case len(rest) >= 3 && rest[0] == "d" && rest[1] == "e":
			return "", newErr(CodeInvalidSpreadsheetURL, nil, "a published-to-the-web URL (/d/e/…) does not carry "+
				"the spreadsheet's id: copy the URL from the address bar while you edit the spreadsheet")
		case len(rest) >= 2 && rest[0] == "d" && spreadsheetIDPattern.MatchString(rest[1]):
			return rest[1], nil
		}
	}
	return "", newErr(CodeInvalidSpreadsheetURL, nil, "no /spreadsheets/d/<id> path in the URL: "+acceptedForms)
}
