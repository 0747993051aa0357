package demo

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A store directory the run made itself is kept, and the report says how
// much space it takes and the command that removes it, quoted for the
// shell; a directory the user gave (--dir) gets no removal line.
func TestDemoSaysHowToRemoveTheStoreItMade(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a b's", "hikoutei-demo-1")
	if err := os.MkdirAll(filepath.Join(dir, "snapshots"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"log.db": 2_000_000, "snapshots/s1": 500_000} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	e := &env{cfg: Config{Dir: dir, MadeDir: true, Out: &out}}
	e.removal()
	quoted := "'" + strings.ReplaceAll(dir, "'", `'\''`) + "'"
	if want := "the store takes 2.5 MB; remove it when done: rm -r " + quoted + "\n"; !strings.HasSuffix(out.String(), want) {
		t.Fatalf("removal line %q, want it to end %q", out.String(), want)
	}
	out.Reset()
	e.cfg.MadeDir = false
	if e.removal(); out.Len() != 0 {
		t.Fatalf("a --dir store got a removal line: %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "log.db")); err != nil {
		t.Fatalf("the store is gone: %v", err)
	}
}
