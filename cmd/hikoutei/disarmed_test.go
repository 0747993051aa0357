//go:build !failpoints

package main

import (
	"strings"
	"testing"
)

// TestRepro12_CrashCampaignNeedsFailpoints: `hikoutei crash` refuses to
// run in a build without failpoints (make crash builds with them).
func TestRepro12_CrashCampaignNeedsFailpoints(t *testing.T) {
	code, out := runCLI(t, "crash", "--kills", "1")
	if code != exitFailure || !strings.Contains(out, "-tags failpoints") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
