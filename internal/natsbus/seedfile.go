package natsbus

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"

	"github.com/nats-io/nkeys"

	"github.com/hikoutei/hikoutei-go/internal/privatefile"
)

// maxSeedFileSize caps what is read from a seed file (a seed is 58 bytes).
const maxSeedFileSize = 4096

// loadOrCreateSeed returns the key pair whose seed is in path, first
// creating the file with a new key of kind prefix when it does not exist:
// mode 0600, written to a temporary file in the same directory and linked
// into place, so it is never seen half-written and never replaces a file.
// created reports whether this call made it. Errors: ErrCredentialsFile
// (naming the file, never its content).
func loadOrCreateSeed(path string, prefix nkeys.PrefixByte) (kp nkeys.KeyPair, created bool, err error) {
	kp, err = readSeed(path, prefix)
	if !errors.Is(err, fs.ErrNotExist) {
		return kp, false, err
	}
	if err := createSeed(path, prefix); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, false, err
	} else if err == nil {
		created = true
	}
	kp, err = readSeed(path, prefix)
	return kp, created, err
}

// readSeed reads a seed file that must be a regular file (symlinks are not
// followed), not accessible by group or others, and hold one seed of kind
// prefix. A missing file is reported as fs.ErrNotExist, unwrapped.
func readSeed(path string, prefix nkeys.PrefixByte) (nkeys.KeyPair, error) {
	b, err := privatefile.Read(path, maxSeedFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCredentialsFile, err)
	}
	kp, err := nkeys.FromSeed(bytes.TrimSpace(b)) // kp keeps b: not wiped
	if err != nil {
		return nil, fmt.Errorf("%w: %s holds no valid nkey seed", ErrCredentialsFile, path)
	}
	if p, err := kp.PublicKey(); err != nil || len(p) == 0 || nkeys.Prefix(p) != prefix {
		return nil, fmt.Errorf("%w: %s holds a seed of another kind (want %s)", ErrCredentialsFile, path, prefix)
	}
	return kp, nil
}

// createSeed writes a new seed of kind prefix at path without ever
// replacing an existing file (fs.ErrExist when one appeared meanwhile).
func createSeed(path string, prefix nkeys.PrefixByte) error {
	kp, err := nkeys.CreatePair(prefix)
	if err != nil {
		return fmt.Errorf("%w: %s: generate: %v", ErrCredentialsFile, path, err)
	}
	defer kp.Wipe()
	seed, err := kp.Seed()
	if err != nil {
		return fmt.Errorf("%w: %s: generate: %v", ErrCredentialsFile, path, err)
	}
	defer wipe(seed)
	line := append(seed, '\n')
	defer wipe(line)
	err = privatefile.Create(path, line)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %v", ErrCredentialsFile, err)
	}
	return err
}

func wipe(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}
