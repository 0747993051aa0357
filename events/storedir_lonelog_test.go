package events

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// A log.db that is not a file (a FIFO, a directory) and is all the
// directory holds is not "no log.db": RequireLog said "DIR has no log.db"
// (fs.ErrNotExist, so the CLI says not_a_store: "has no log.db" of a
// directory that has one) and OpenWriter took the directory for a new
// store and opened log.db — a FIFO with bbolt (log_corrupt: "file check:
// not a regular file"), a directory with a bare EISDIR. It should be
// StoreLogMissingError naming the kind, as it is beside other files, and
// the writer should not open it.
func TestI26_ALoneLogThatIsNotAFileIsNamedSoAndNotOpened(t *testing.T) {
	cases := map[string]struct {
		make func(path string) error
		kind string
	}{
		"FIFO":      {func(path string) error { return syscall.Mkfifo(path, 0o600) }, "FIFO"},
		"directory": {func(path string) error { return os.Mkdir(path, 0o700) }, "directory"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			must(t, c.make(filepath.Join(dir, LogFileName)))
			before := listDir(t, dir)
			var missing *StoreLogMissingError
			if err := RequireLog(dir); !errors.As(err, &missing) || missing.Kind != c.kind {
				t.Errorf("RequireLog: %v; want store_log_missing naming a %s", err, c.kind)
			}
			_, err := OpenWriter(dir, WriterOptions{HeartbeatInterval: -1, AcquireWait: -1})
			if !errors.As(err, &missing) || missing.Kind != c.kind {
				t.Errorf("OpenWriter: %v; want store_log_missing naming a %s", err, c.kind)
			}
			if after := listDir(t, dir); !reflect.DeepEqual(before, after) {
				t.Fatalf("directory changed: %v -> %v", before, after)
			}
		})
	}
}
