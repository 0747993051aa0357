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
	"zombiezen.com/go/sqlite/sqlitex"

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
// read model's writing connection keeps SQLite's automatic checkpoint
// only as a backstop at 8,000 frames, and after its commits a checkpoint runs on another connection and
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
	if n, err := p.WriterAutoCheckpoint(); err != nil || n != 8000 {
		t.Fatalf("writer's wal_autocheckpoint = %d, %v; want 8000 (the log's bound)", n, err)
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

// TestAFailedBackgroundCheckpointIsTriedAgainAndFailsNothing: a
// background checkpoint that fails (a full disk here, as the storage
// campaign fills it) fails no commit and not Close; the next commit's
// checkpoint copies every frame.
func TestAFailedBackgroundCheckpointIsTriedAgainAndFailsNothing(t *testing.T) {
	p := openAt(t, filepath.Join(t.TempDir(), projector.FileName))
	seen := make(chan frames, 64)
	failed := false
	p.CheckpointWALWith(func(conn *sqlite.Conn) error {
		if !failed {
			failed = true
			seen <- frames{}
			return syscall.ENOSPC
		}
		log, copied, err := projector.PassiveCheckpointFrames(conn)
		seen <- frames{log, copied}
		return err
	})
	h := newHistory()
	must(t, p.Apply(airports(h, 10)))
	if f := waitFrames(t, seen); f != (frames{}) {
		t.Fatalf("first checkpoint: %+v, want the failing one", f)
	}
	must(t, p.Apply(airports(h, 1)))
	for {
		if f := waitFrames(t, seen); f.log > 0 && f.copied == f.log {
			break
		}
	}
	must(t, p.Close())
}

// waitFrames is the next background checkpoint's report.
func waitFrames(t *testing.T, seen <-chan frames) frames {
	t.Helper()
	select {
	case f := <-seen:
		return f
	case <-time.After(time.Minute):
		t.Fatal("no background checkpoint within a minute")
	}
	return frames{}
}

// TestATruncationOwedHappensOnceTheReaderLetsGo: an erasure's truncation
// of the write-ahead log that a reader's older snapshot kept from
// completing (Remask's busy) is owed: the background checkpointer tries it
// again, without holding the writer, until read.sqlite-wal is empty, so the
// frames that held the erased values in clear do not stay in the file.
func TestATruncationOwedHappensOnceTheReaderLetsGo(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	defer p.Close()
	h := newHistory()
	must(t, p.Apply(airports(h, 200)))
	reader, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	must(t, sqlitex.ExecuteTransient(reader, "BEGIN", nil))
	must(t, sqlitex.ExecuteTransient(reader, "SELECT count(*) FROM sqlite_master", nil))
	must(t, p.Apply(airports(h, 200))) // frames past the reader's snapshot
	if busy, err := p.TruncateOrOwe(); err != nil || !busy {
		t.Fatalf("truncation beside a reader's older snapshot: busy %v, %v; want busy", busy, err)
	}
	if walSize(t, path) == 0 {
		t.Fatal("read.sqlite-wal truncated while a reader held an older snapshot")
	}
	must(t, sqlitex.ExecuteTransient(reader, "COMMIT", nil))
	deadline := time.Now().Add(time.Minute)
	for walSize(t, path) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("read.sqlite-wal still %d bytes a minute after the reader let go", walSize(t, path))
		}
		time.Sleep(10 * time.Millisecond) // polls a condition a correct checkpointer reaches
	}
	must(t, p.Apply(airports(h, 10))) // the store goes on writing after it
}

func walSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
