package events

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A restore source that is not a regular file is refused with advice for
// a source (a backup file to read), not the output targets' "give the
// path of a new or regular file": a source cannot be new.
func TestReview29_RestoreSourceNotRegularAdvisesABackupFileNotANewOne(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"/dev/zero", fifo, dir} {
		_, err := RestoreLog(src, filepath.Join(t.TempDir(), "new"))
		if !errors.Is(err, ErrRestoreSource) {
			t.Fatalf("restore --from %s: %v, want restore_source_invalid", src, err)
		}
		if msg := err.Error(); strings.Contains(msg, "new or regular file") || !strings.Contains(msg, "backup file") {
			t.Errorf("restore --from %s: %q: want advice naming a backup file, not a new file", src, msg)
		}
	}
}
