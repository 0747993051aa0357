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
		"https://docs.google.com/spreadsheets/u/1/d/" + id + "/edit",
		"docs.google.com/spreadsheets/d/" + id + "/edit",
		" " + id + " ",
		"\t" + id + "\n",
	}
	for _, u := range good {
		got, err := ParseSpreadsheetURL(u)
		if err != nil || got != id {
			t.Fatalf("%q -> %q, %v", u, got, err)
		}
	}
	bad := []string{"", "   ", "\t\n", "http://docs.google.com/spreadsheets/d/" + id, "https://evil.example/spreadsheets/d/" + id,
		"https://docs.google.com/document/d/" + id, "https://docs.google.com/spreadsheets/d/", "not a url",
		"https://docs.google.com/spreadsheets/d/e/2PACX-1vQx7Yz/pubhtml", "https://drive.google.com/open?id=" + id,
		id + " " + id, id + "\n" + id, "demo.airports", "ftp:demo"}
	for _, u := range bad {
		_, err := ParseSpreadsheetURL(u)
		if !errors.Is(err, ErrInvalidSpreadsheetURL) {
			t.Fatalf("%q: %v, want %v", u, err, ErrInvalidSpreadsheetURL)
		}
		if strings.TrimSpace(u) != "" && strings.Contains(err.Error(), u) && !strings.Contains(acceptedForms, u) {
			t.Fatalf("error repeats the input: %v", err)
		}
	}
}

// A bare id has no length rule: an emulator's short ids are accepted as
// Google's 44-character ones are (the charset is the rule).
func TestParseSpreadsheetURLAcceptsShortIDs(t *testing.T) {
	for _, id := range []string{"a", "demo", "demo-airports", "x_1-2", "ABCDEFGHI"} {
		got, err := ParseSpreadsheetURL(id)
		if err != nil || got != id {
			t.Fatalf("%q -> %q, %v", id, got, err)
		}
		got, err = ParseSpreadsheetURL("https://docs.google.com/spreadsheets/d/" + id + "/edit")
		if err != nil || got != id {
			t.Fatalf("URL of %q -> %q, %v", id, got, err)
		}
	}
}

// A value that is neither a Sheets URL nor a bare id says both forms are
// accepted, and never repeats the value; an empty one says it is empty;
// a published-to-the-web URL says where to copy the right one.
func TestParseSpreadsheetURLNamesBothAcceptedForms(t *testing.T) {
	for in, want := range map[string]string{"not an id": "bare id", "": "empty: ",
		"https://docs.google.com/spreadsheets/d/e/2PACX-1vQx7Yz/pubhtml": "address bar"} {
		_, err := ParseSpreadsheetURL(in)
		if err == nil || !strings.Contains(err.Error(), want) ||
			(in != "" && strings.Contains(err.Error(), in)) {
			t.Fatalf("ParseSpreadsheetURL(%q) = %v, want it to say %q", in, err, want)
		}
		if !strings.Contains(err.Error(), "docs.google.com/spreadsheets/d/<id>") && want != "address bar" {
			t.Fatalf("ParseSpreadsheetURL(%q) = %v: names no accepted form", in, err)
		}
	}
}
