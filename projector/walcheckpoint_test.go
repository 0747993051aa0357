package projector_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// airports is n created airports of h, one event each.
func airports(h *history, n int) []events.Event {
	evs := make([]events.Event, 0, n)
	for i := range n {
		evs = append(evs, h.created("Airport", fmt.Sprintf("A%05d", i), map[string]any{"name": fmt.Sprintf("Airport %d", i),
			"altitude": int64(i), "latitude": 1.5, "active": true, "notes": ""}, 1))
	}
	return evs
}

// frames is one background checkpoint's view of the write-ahead log.
type frames struct{ log, copied int }

// TestTheWritersCommitsAreCheckpointedOnAConnectionOfTheirOwn: a live
// read model's writing connection has SQLite's automatic checkpoint off,
// and after its commits a checkpoint runs on another connection and
// copies every committed frame into read.sqlite; closing leaves no
// write-ahead log behind.
func TestTheWritersCommitsAreCheckpointedOnAConnectionOfTheirOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	seen := make(chan frames, 64)
	p.CheckpointWALWith(func(conn *sqlite.Conn) error {
		if conn == p.Conn() {
			t.Error("the background checkpoint ran on the writer's connection")
		}
		log, copied, err := projector.PassiveCheckpointFrames(conn)
		seen <- frames{log, copied}
		return err
	})
	if n, err := p.WriterAutoCheckpoint(); err != nil || n != 0 {
		t.Fatalf("writer's wal_autocheckpoint = %d, %v; want 0 (off)", n, err)
	}
	h := newHistory()
	must(t, p.Apply(airports(h, 2000)))
	deadline := time.After(time.Minute)
	for done := false; !done; {
		select {
		case f := <-seen:
			done = f.log > 0 && f.copied == f.log
		case <-deadline:
			t.Fatal("no background checkpoint copied the committed frames within a minute")
		}
	}
	must(t, p.Close())
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Close: %s-wal: %v; want it removed", projector.FileName, err)
	}
}

// TestAFailedBackgroundCheckpointTurnsTheWritersOwnBackOn: when a
// background checkpoint fails (an I/O error here), the writer's next
// commit turns SQLite's automatic checkpoint back on, so the write-ahead
// log cannot grow without bound, and Close reports the failure.
func TestAFailedBackgroundCheckpointTurnsTheWritersOwnBackOn(t *testing.T) {
	p := openAt(t, filepath.Join(t.TempDir(), projector.FileName))
	failed := make(chan struct{})
	p.CheckpointWALWith(func(*sqlite.Conn) error {
		close(failed)
		return syscall.EIO
	})
	h := newHistory()
	must(t, p.Apply(airports(h, 10)))
	select {
	case <-failed:
	case <-time.After(time.Minute):
		t.Fatal("no background checkpoint ran within a minute")
	}
	// the goroutine records the failure after run returns: commit until
	// the writer has seen it
	deadline := time.Now().Add(time.Minute)
	for {
		must(t, p.Apply(airports(h, 1)))
		n, err := p.WriterAutoCheckpoint()
		must(t, err)
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the writer's automatic checkpoint stayed off after a failed background checkpoint")
		}
		time.Sleep(time.Millisecond)
	}
	if err := p.Close(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("Close: %v; want the checkpoint's EIO", err)
	}
}
