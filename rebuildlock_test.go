package hikoutei_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// Two rebuilds of one store's read model cannot run at once: each holds
// the log only shared, and both build in the store's one rebuild file, so
// the second removed the file the first was building in (two `replay
// --dir` of one store: one failed with "no such file", or installed the
// other's half-built file). The second now fails with store_locked and
// leaves the first's file alone; once the first is done it runs.
func TestTwoRebuildsOfOneStoreDoNotRunAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	openLogged(t, dir) // one airport committed, the store closed
	building := filepath.Join(dir, ".read.sqlite.rebuild")
	if err := os.WriteFile(building, []byte("the first rebuild's"), 0o600); err != nil {
		t.Fatal(err)
	}
	release, err := events.LockRebuild(dir) // the first rebuild, running
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := hikoutei.RebuildReadModel(t.Context(), dir, hikoutei.ReplayOptions{}); !errors.Is(err, hikoutei.ErrStoreLocked) {
		t.Fatalf("a second rebuild: %v; want store_locked", err)
	}
	if _, err := os.Stat(building); err != nil {
		t.Fatalf("the second rebuild touched the first's file: %v", err)
	}
	release()
	if _, _, err := hikoutei.RebuildReadModel(t.Context(), dir, hikoutei.ReplayOptions{}); err != nil {
		t.Fatalf("a rebuild once the first is done: %v", err)
	}
}
