package engine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A file, or a path under a file, given as a store directory is
// not_a_store, like a missing directory: never a raw stat error.
func TestIsStoreRefusesAFileAsNotAStore(t *testing.T) {
	file := filepath.Join(t.TempDir(), "afile")
	if err := os.WriteFile(file, []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{file, filepath.Join(file, "sub"), filepath.Join(t.TempDir(), "missing")} {
		if err := IsStore(dir); !errors.Is(err, ErrNotAStore) {
			t.Errorf("IsStore(%s) = %v, want not_a_store", dir, err)
		}
	}
}
