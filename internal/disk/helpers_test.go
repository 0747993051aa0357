package disk

import (
	"os"
	"testing"
)

func write(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mkdir(path string) error { return os.Mkdir(path, 0o700) }
