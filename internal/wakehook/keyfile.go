package wakehook

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// maxKeyFile caps what is read from a key file.
const maxKeyFile = 4096

// LoadOrCreateKey returns the secret in the key file at path (its text,
// surrounding white space trimmed), first creating the file when it does
// not exist: 32 random bytes as unpadded base64url, mode 0600, written to
// a temporary file and linked into place, so it is never seen
// half-written and never replaces a file. created reports whether this
// call made it. Errors: ErrKeyFile (naming the file, never its content).
func LoadOrCreateKey(path string) (secret []byte, created bool, err error) {
	secret, err = readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return secret, false, err
	}
	if err := createKey(path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	} else if err == nil {
		created = true
	}
	secret, err = readKey(path)
	return secret, created, err
}

// readKey reads a key file that must be a regular file (symlinks are not
// followed), not accessible by group or others, and hold a secret of at
// least MinSecretBytes. A missing file is fs.ErrNotExist, unwrapped.
func readKey(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrKeyFile, path, pathless(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrKeyFile, path)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is accessible by group or others (mode %04o); run chmod 600", ErrKeyFile, path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil || len(b) > maxKeyFile {
		return nil, fmt.Errorf("%w: %s: unreadable or larger than %d bytes", ErrKeyFile, path, maxKeyFile)
	}
	if b = bytes.TrimSpace(b); len(b) < MinSecretBytes {
		return nil, fmt.Errorf("%w: %s holds fewer than %d characters", ErrKeyFile, path, MinSecretBytes)
	}
	return b, nil
}

// createKey writes a new secret at path without ever replacing a file
// (fs.ErrExist when one appeared meanwhile).
func createKey(path string) error {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("%w: %s: generate: %v", ErrKeyFile, path, err)
	}
	text := []byte(base64.RawURLEncoding.EncodeToString(raw) + "\n")
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrKeyFile, path, pathless(err))
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(text)
	if err == nil {
		err = tmp.Sync()
	}
	if err = errors.Join(err, tmp.Close()); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrKeyFile, path, pathless(err))
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return fmt.Errorf("%w: %s: %v", ErrKeyFile, path, pathless(err))
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// pathless drops the path from an *fs.PathError or *os.LinkError (the
// caller names the file).
func pathless(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
