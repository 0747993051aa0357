package main

import (
	"strings"
	"testing"
)

// TestAuditAsOfThatIsNotATimeSaysWhatItWants: a malformed --as-of is a
// usage error (exit 2, audit's usage) that names the expected form, not
// Go's time-parse message.
func TestAuditAsOfThatIsNotATimeSaysWhatItWants(t *testing.T) {
	dir := closedItemStore(t)
	audit := findCommand(t, []string{"audit"})
	args := []string{"audit", "--dir", dir, "--as-of", "garbage"}
	wantUsage(t, audit, args)
	_, _, stderr := runSplit(args...)
	if !strings.Contains(stderr, "is not an RFC 3339 time") || strings.Contains(stderr, "cannot parse") {
		t.Errorf("stderr does not say which time it wants:\n%s", stderr)
	}
}
