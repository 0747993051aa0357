package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// A store's own file given as its directory (the log, the lease, the read
// model) is not_a_store saying to pass the folder that holds it, by name;
// any other file is only "not a directory".
func TestIsStoreOfAStoresFileNamesTheFolderToPass(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"log.db", "lease.toml", "read.sqlite", "notes.txt"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		err := IsStore(path)
		hint := "pass the folder that holds " + name + ": --dir " + dir
		if !errors.Is(err, ErrNotAStore) || strings.Contains(err.Error(), hint) != (name != "notes.txt") {
			t.Errorf("IsStore(%s) = %v", path, err)
		}
	}
}
