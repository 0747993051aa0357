package main

import (
	"strings"
	"testing"
)

// --spreadsheet takes an id of any length made of letters, digits, '-'
// and '_' (an emulator's ids may be short), or a docs.google.com URL; it
// refuses an empty or blank value and anything else (exit 2, naming the
// flag, never echoing the value). Accepted values get past the flag
// checks: serve then fails on the empty folder (not_a_store, exit 1).
func TestSpreadsheetFlagAcceptsShortIDsAndRefusesBlankOrForeignValues(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"demo", "x", "demo-airports",
		"https://docs.google.com/spreadsheets/d/demo/edit#gid=0", "docs.google.com/spreadsheets/d/demo"} {
		code, _, errOut := runSplit("serve", "--dir", dir, "--sheets-endpoint", "http://127.0.0.1:1", "--spreadsheet", v)
		if code != exitFailure || !strings.Contains(errOut, "not_a_store") {
			t.Errorf("--spreadsheet %q: exit %d, want 1 with not_a_store:\n%s", v, code, errOut)
		}
	}
	for v, why := range map[string]string{"   ": "empty", "demo airports": "bare id",
		"https://example.com/d/x": "bare id", "https://docs.google.com/spreadsheets/d/e/2PACX-1vQx/pubhtml": "address bar"} {
		code, _, errOut := runSplit("serve", "--dir", dir, "--sheets-endpoint", "http://127.0.0.1:1", "--spreadsheet", v)
		first, _, _ := strings.Cut(errOut, "\n")
		if code != exitUsage || !strings.Contains(first, `flag "--spreadsheet"`) || !strings.Contains(first, why) ||
			(strings.TrimSpace(v) != "" && strings.Contains(first, v)) {
			t.Errorf("--spreadsheet %q: exit %d, want 2 saying %q:\n%s", v, code, why, errOut)
		}
	}
}
