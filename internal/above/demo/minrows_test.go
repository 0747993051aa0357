package demo

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run on fewer airports than the person acts need fails before it creates
// anything, naming the minimum; it panicked (index out of range) before.
func TestRunOnTooFewAirportsFailsBeforeCreatingAnything(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	_, err := Run(t.Context(), Config{Rows: MinRows - 1, Dir: dir, Out: io.Discard, Progress: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "at least 11 airports") {
		t.Fatalf("Run with %d rows: %v, want the minimum named", MinRows-1, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused run created %s: %v", dir, err)
	}
}
