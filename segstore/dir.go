package segstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// SchemeDir is the Location scheme of a folder (Dir).
const SchemeDir = "dir"

// Dir is a Store in a folder of the local disk: one file per segment
// (mode 0600), written to NAME.tmp, synced, renamed and the folder
// synced. The folder is created (0700) by the first Put; an absent
// folder holds nothing. It is the store's default (DIR/segments), with
// the file names and layout every earlier build wrote.
type Dir struct{ path string }

// NewDir is the Store of the folder path.
func NewDir(path string) *Dir { return &Dir{path: path} }

// Path is the folder.
func (d *Dir) Path() string { return d.path }

// Put writes data to the file name through a temporary file.
func (d *Dir) Put(ctx context.Context, name string, data []byte) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return unavailable("put", name, err)
	}
	tmp := filepath.Join(d.path, name+".tmp")
	if err := writeSynced(tmp, data); err != nil {
		_ = os.Remove(tmp)
		return unavailable("put", name, err)
	}
	err := os.Rename(tmp, filepath.Join(d.path, name))
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return unavailable("put", name, err)
	}
	return nil
}

// writeSynced creates path (0600) holding data and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	failpoint.Inject(failpoint.SealAfterWrite)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get reads the file name.
func (d *Dir) Get(ctx context.Context, name string) ([]byte, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(d.path, name))
	if err != nil {
		return nil, d.readErr("get", name, err)
	}
	return b, nil
}

// Stat is the size of the file name.
func (d *Dir) Stat(ctx context.Context, name string) (Info, error) {
	if err := checkName(name); err != nil {
		return Info{}, err
	}
	fi, err := os.Stat(filepath.Join(d.path, name))
	if err == nil && !fi.Mode().IsRegular() {
		err = fs.ErrNotExist
	}
	if err != nil {
		return Info{}, d.readErr("stat", name, err)
	}
	return Info{Name: name, Size: fi.Size()}, nil
}

// List lists the folder's files (an absent folder: none), temporary
// files of Puts that did not complete included.
func (d *Dir) List(ctx context.Context) ([]Info, error) { return d.ListPrefix(ctx, "") }

// ListPrefix is List of the names starting with prefix: only those are
// stat'ed.
func (d *Dir) ListPrefix(ctx context.Context, prefix string) ([]Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, unavailable("list", "", err)
	}
	var out []Info
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			out = append(out, Info{Name: e.Name(), Size: fi.Size()})
		}
	}
	return out, nil // os.ReadDir sorts by name
}

// Delete removes the file name and syncs the folder.
func (d *Dir) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	err := os.Remove(filepath.Join(d.path, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = syncDir(d.path)
	}
	if err != nil {
		return unavailable("delete", name, err)
	}
	return nil
}

// Location is the folder.
func (d *Dir) Location() Location { return Location{Scheme: SchemeDir, Where: d.path} }

// Close does nothing.
func (d *Dir) Close() error { return nil }

// readErr is ErrNotFound for an absent file, else ErrUnavailable.
func (d *Dir) readErr(op, name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s in %s", ErrNotFound, name, d.path)
	}
	return unavailable(op, name, err)
}

// unavailable wraps err in ErrUnavailable, naming the operation.
func unavailable(op, name string, err error) error {
	if name == "" {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, op, err)
	}
	return fmt.Errorf("%w: %s %s: %w", ErrUnavailable, op, name, err)
}

// syncDir syncs the folder dir's entries.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
