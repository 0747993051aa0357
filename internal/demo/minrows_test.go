package demo

import (
	"io"
	"strings"
	"testing"
)

// A run on fewer airports than the person acts need fails at setup with
// a message naming the minimum; it panicked (index out of range) before.
func TestRunOnTooFewAirportsFailsAtSetup(t *testing.T) {
	_, err := Run(t.Context(), Config{Rows: MinRows - 1, Dir: t.TempDir(), Out: io.Discard, Progress: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "at least 11 airports") {
		t.Fatalf("Run with %d rows: %v, want the minimum named", MinRows-1, err)
	}
}
