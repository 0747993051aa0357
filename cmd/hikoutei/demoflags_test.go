package main

import (
	"strings"
	"testing"
)

// A negative --rows or --stall, or fewer rows than the person acts
// need (--rows 1 panicked), is a usage error (exit 2 with demo's
// usage), checked before the demo creates anything.
func TestDemoRefusesNegativeOrTooFewRowsAndNegativeStall(t *testing.T) {
	for _, args := range [][]string{{"demo", "--rows", "-5"}, {"demo", "--rows", "1"}, {"demo", "--rows", "10"}, {"demo", "--stall", "-1s"}} {
		code, _, stderr := runSplit(args...)
		if code != exitUsage || !strings.Contains(stderr, "Usage:\n  hikoutei demo") {
			t.Errorf("%v: exit %d, want %d with demo's usage; stderr:\n%s", args, code, exitUsage, stderr)
		}
	}
}
