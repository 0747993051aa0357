package keyring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// newKeyFile makes a key file holding one subject's key and returns its
// path and the key's bytes.
func newKeyFile(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), File)
	r, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	d := r.Digest("alice")
	if _, err := r.Ensure([]Digest{d}); err != nil {
		t.Fatal(err)
	}
	key := r.keys[d].key
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return path, key[:]
}

// A key file reached through a symbolic link is refused: the rewrite that
// destroys a key renames a new file over the link, so the destroyed key
// would stay in the file the link points to (I37).
func TestI37_ASymlinkedKeyFileIsRefused(t *testing.T) {
	path, key := newKeyFile(t)
	elsewhere := filepath.Join(t.TempDir(), "keys-elsewhere.db")
	mustRename(t, path, elsewhere)
	if err := os.Symlink(elsewhere, path); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, true)
	if err == nil {
		d := r.Digest("alice")
		err = errors.Join(r.MarkPending(d, "cli"), r.Destroy(d), r.Close())
		b, _ := os.ReadFile(elsewhere)
		t.Fatalf("a symlinked key file opened (erasure: %v); the destroyed key still in its target: %v", err, bytes.Contains(b, key))
	}
	if !errors.Is(err, ErrKeyFile) {
		t.Fatalf("Open: %v", err)
	}
	if _, err := OpenReadOnly(path); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("OpenReadOnly: %v", err)
	}
}

// A truncated key file is personal_key_file, not a fault on bbolt's memory
// map (SIGBUS kills the process); a key file others can read is refused,
// as the store's other secret files are.
func TestKeyFileDamageIsAnError(t *testing.T) {
	path, _ := newKeyFile(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, true); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("a truncated key file: %v", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, true); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("a key file of mode 0644: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, true); !errors.Is(err, ErrKeyFile) {
		t.Fatalf("a directory: %v", err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}
