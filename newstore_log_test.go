package hikoutei_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// lockedBuffer is a log destination safe for the store's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// openLogged opens dir with a logger writing into a fresh buffer, commits
// one airport and closes the store; it returns what was logged.
func openLogged(t *testing.T, dir string) string {
	t.Helper()
	var out lockedBuffer
	opts := hikoutei.Options{NoAdmin: true, Logger: slog.New(slog.NewTextHandler(&out, nil))}
	s, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	if err := u.Persist(&Airport{ID: "GKA", Name: "Goroka"}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// A brand-new store creates its read model without saying it is missing;
// a store whose read.sqlite was deleted says so when it rebuilds it.
func TestOnlyAStoreThatLostItsReadModelSaysItIsMissing(t *testing.T) {
	dir := t.TempDir()
	if logged := openLogged(t, dir); strings.Contains(logged, "read model missing") {
		t.Fatalf("a brand-new store logged:\n%s", logged)
	}
	if logged := openLogged(t, dir); strings.Contains(logged, "read model missing") {
		t.Fatalf("a reopened store logged:\n%s", logged)
	}
	if err := os.Remove(filepath.Join(dir, hikoutei.ReadModelFile)); err != nil {
		t.Fatal(err)
	}
	if logged := openLogged(t, dir); !strings.Contains(logged, "read model missing") {
		t.Fatalf("a store whose read model was deleted did not say so:\n%s", logged)
	}
}
