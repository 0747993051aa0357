package wakehook

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The key file is made once, 0600, and reused; one readable by others
// or a symlink is refused.
func TestWakeKeyFileIsCreatedPrivateAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wake.key")
	first, created, err := LoadOrCreateKey(path)
	if err != nil || !created || len(first) < MinSecretBytes {
		t.Fatalf("first load: %d bytes, created %v, %v", len(first), created, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o", st.Mode().Perm())
	}
	again, created, err := LoadOrCreateKey(path)
	if err != nil || created || string(again) != string(first) {
		t.Fatalf("second load: created %v, same %v, %v", created, string(again) == string(first), err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	link := filepath.Join(t.TempDir(), "link.key")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateKey(link); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("a symlink: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadOrCreateKey(path); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("a key file readable by others: %v", err)
	}
}
