package projector_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// TestTheWriteAheadLogStaysBoundedUnderSustainedCommits: a writer that
// commits one event at a time without pause (a steady stream of
// commands) keeps read.sqlite-wal bounded: about 32 MiB (the writer's
// backstop of 8,000 frames), where SQLite's own automatic checkpoint kept
// it at about 4 MiB (1,000 frames). A background PASSIVE
// checkpoint copies the frames, but the log restarts from its beginning
// only when a write transaction starts with every frame copied, which a
// writer that commits during each checkpoint never sees: the log then
// grows with every commit (1.1 GiB in 8 s on a 2-core machine).
func TestTheWriteAheadLogStaysBoundedUnderSustainedCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("commits for a few seconds")
	}
	const limit = 64 << 20
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	defer p.Close()
	h := newHistory()
	var largest int64
	for n := range 10000 {
		must(t, p.Apply([]events.Event{h.created("Airport", fmt.Sprintf("A%07d", n), map[string]any{
			"name": fmt.Sprintf("Airport %d with a longer name", n), "altitude": int64(n), "latitude": 1.5,
			"active": true, "notes": ""}, 1)}))
		fi, err := os.Stat(path + "-wal")
		if err == nil {
			largest = max(largest, fi.Size())
		}
		if err == nil && fi.Size() > limit {
			t.Fatalf("after %d single-event commits: %s-wal is %d bytes; want at most %d MiB (about 32 MiB: the writer's backstop)", n+1,
				projector.FileName, fi.Size(), limit>>20)
		}
	}
	t.Logf("the largest %s-wal seen: %d bytes", projector.FileName, largest)
}
