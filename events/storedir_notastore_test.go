package events

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A folder holding files but none of a store's is refused without the
// advice meant for a store that lost its log (restore log.db from a
// backup): it says the folder is not a store and how to start one.
func TestRequireLogOnAFolderThatNeverWasAStore(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := RequireLog(dir)
	var missing *StoreLogMissingError
	if !errors.As(err, &missing) || !errors.Is(err, ErrStoreLogMissing) || missing.StoreFiles {
		t.Fatalf("RequireLog: %v", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "from a backup") || !strings.Contains(msg, "not a store directory") ||
		!strings.Contains(msg, "start a store") {
		t.Fatalf("message: %s", msg)
	}
}
