package hikoutei

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOpenSetsAsideAReadModelThatIsNotAFile: a read.sqlite that is a
// FIFO (which SQLite's open would wait on for ever), a directory or a
// link to a device is unusable as a damaged file is: Open sets it aside
// (renamed, never deleted), rebuilds the read model from the log, and
// every committed record is read back.
func TestOpenSetsAsideAReadModelThatIsNotAFile(t *testing.T) {
	for name, plant := range map[string]func(path string) error{
		"fifo":      func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"directory": func(path string) error { return os.Mkdir(path, 0o700) },
		"device":    func(path string) error { return os.Symlink(os.DevNull, path) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir)
			a := readAirports(t)[0]
			commit(t, s, &a)
			mustT(t, s.Close())
			path := filepath.Join(dir, ReadModelFile)
			mustT(t, removeReadModel(path))
			mustT(t, plant(path))

			s = openStore(t, dir)
			defer s.Close()
			kept, err := filepath.Glob(path + ".unusable-*")
			if err != nil || len(kept) != 1 {
				t.Fatalf("set aside as %v (%v); want the %s kept under one unusable name", kept, err, name)
			}
			if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("read.sqlite after the open: %v %v; want a rebuilt file", fi, err)
			}
			if got, err := Get[Airport](t.Context(), s, a.ID); err != nil || got.Name != a.Name {
				t.Fatalf("the committed airport after the rebuild: %+v, %v", got, err)
			}
		})
	}
}
