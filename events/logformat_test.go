package events

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// setFormat writes format f into the meta of the closed log at path.
func setFormat(t *testing.T, path, f string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(metaFormat, []byte(f)) }); err != nil {
		t.Fatal(err)
	}
}

// formatOf reads the format in the meta of the log at path.
func formatOf(t *testing.T, path string) string {
	t.Helper()
	l, err := OpenLog(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var f string
	l.view(func(tx *bolt.Tx) error { f = string(tx.Bucket(bucketMeta).Get(metaFormat)); return nil })
	return f
}

// A log of the previous format is read as it is, and marked with this
// build's format when opened for writing, so an older build refuses the
// file by its format instead of meeting records it cannot read; a format
// newer than this build's is refused at open, saying so.
func TestLogFormatOlderIsUpgradedOnWriteNewerIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFileName)
	l, err := OpenLog(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	setFormat(t, path, "1")
	if f := formatOf(t, path); f != "1" {
		t.Fatalf("a read-only open changed the format to %q", f)
	}
	if l, err = OpenLog(path, Options{}); err != nil {
		t.Fatalf("format 1 opened for writing: %v", err)
	}
	l.Close()
	if f := formatOf(t, path); f != strconv.Itoa(LogFormat) {
		t.Fatalf("format after a write open: %q, want %d", f, LogFormat)
	}
	setFormat(t, path, "2")
	if l, err = OpenLog(path, Options{}); err != nil {
		t.Fatalf("format 2 opened for writing: %v", err)
	}
	l.Close()
	if f := formatOf(t, path); f != strconv.Itoa(LogFormat) {
		t.Fatalf("format 2 after a write open: %q, want %d", f, LogFormat)
	}
	setFormat(t, path, "7")
	_, err = OpenLog(path, Options{ReadOnly: true})
	if !errors.Is(err, ErrCorruptRecord) || !strings.Contains(err.Error(), `log format "7", this build reads formats 1 to 6`) {
		t.Fatalf("format 7: %v", err)
	}
}
