package natsbus

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/nats-io/nkeys"
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
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCredentialsFile, path, opErr(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrCredentialsFile, path)
	}
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s is accessible by group or others (mode %04o); run chmod 600", ErrCredentialsFile, path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSeedFileSize+1))
	if err != nil || len(b) > maxSeedFileSize {
		return nil, fmt.Errorf("%w: %s: unreadable or larger than %d bytes", ErrCredentialsFile, path, maxSeedFileSize)
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
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCredentialsFile, path, opErr(err))
	}
	defer os.Remove(tmp.Name())
	if err := writeSync(tmp, append(seed, '\n')); err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCredentialsFile, path, opErr(err))
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return fmt.Errorf("%w: %s: %v", ErrCredentialsFile, path, opErr(err))
	}
	syncDir(dir)
	return nil
}

func writeSync(f *os.File, b []byte) error {
	defer wipe(b)
	_, err := f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// opErr drops the path from an *fs.PathError (the caller names the file).
func opErr(err error) error {
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

func wipe(b []byte) {
	for i := range b {
		b[i] = 'x'
	}
}
