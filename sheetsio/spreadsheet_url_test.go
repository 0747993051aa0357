package sheetsio

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpreadsheetURL(t *testing.T) {
	const id = "1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms"
	good := []string{
		"https://docs.google.com/spreadsheets/d/" + id + "/edit#gid=0",
		"https://docs.google.com/spreadsheets/d/" + id,
		"https://docs.google.com/spreadsheets/d/" + id + "/edit?usp=sharing",
		" " + id + " ",
	}
	for _, u := range good {
		got, err := ParseSpreadsheetURL(u)
		if err != nil || got != id {
			t.Fatalf("%q -> %q, %v", u, got, err)
		}
	}
	bad := []string{"", "http://docs.google.com/spreadsheets/d/" + id, "https://evil.example/spreadsheets/d/" + id,
		"https://docs.google.com/document/d/" + id, "https://docs.google.com/spreadsheets/d/", "not a url"}
	for _, u := range bad {
		_, err := ParseSpreadsheetURL(u)
		if !errors.Is(err, ErrInvalidSpreadsheetURL) {
			t.Fatalf("%q: %v, want %v", u, err, ErrInvalidSpreadsheetURL)
		}
		if u != "" && strings.Contains(err.Error(), u) {
			t.Fatalf("error repeats the input: %v", err)
		}
	}
}

// A value that is neither a Sheets URL nor a bare id says both forms are
// accepted, and never repeats the value.
func TestParseSpreadsheetURLNamesBothAcceptedForms(t *testing.T) {
	_, err := ParseSpreadsheetURL("notanid")
	if err == nil || !strings.Contains(err.Error(), "docs.google.com/spreadsheets/d/<id>") || !strings.Contains(err.Error(), "bare id") ||
		strings.Contains(err.Error(), "notanid") {
		t.Fatalf("ParseSpreadsheetURL(notanid) = %v", err)
	}
}
