package main

import (
	"strings"
	"testing"
)

// A negative --rows or --stall, or fewer rows than the person acts
// need (--rows 1 panicked), is a usage error (exit 2 with demo's
// help), checked before the demo creates anything.
func TestDemoRefusesNegativeOrTooFewRowsAndNegativeStall(t *testing.T) {
	for _, args := range [][]string{{"demo", "--rows", "-5"}, {"demo", "--rows", "1"}, {"demo", "--rows", "10"}, {"demo", "--stall", "-1s"}} {
		code, _, stderr := runSplit(args...)
		if code != exitUsage || !strings.Contains(stderr, "Run 'hikoutei demo --help' for usage.") {
			t.Errorf("%v: exit %d, want %d naming demo's help; stderr:\n%s", args, code, exitUsage, stderr)
		}
	}
}
