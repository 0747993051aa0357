package wakehook

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"

	"github.com/hikoutei/hikoutei-go/internal/privatefile"
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
	b, err := privatefile.Read(path, maxKeyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKeyFile, err)
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
	err := privatefile.Create(path, []byte(base64.RawURLEncoding.EncodeToString(raw)+"\n"))
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %v", ErrKeyFile, err)
	}
	return err
}
