//go:build !failpoints

package main

import (
	"strings"
	"testing"
)

// TestRepro12_CrashCampaignNeedsFailpoints: `hikoutei-lab crash` refuses to
// run in a build without failpoints (make crash builds with them).
func TestRepro12_CrashCampaignNeedsFailpoints(t *testing.T) {
	code, out := runLab(t, "crash", "--kills", "1")
	if code != exitFailure || !strings.Contains(out, "-tags failpoints") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
