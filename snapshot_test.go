package hikoutei

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/snapshots"
)

// mixedHistory commits creates, updates and removes of n airports.
func mixedHistory(t *testing.T, s *Store, n int) {
	t.Helper()
	loadAirports(t, s, n)
	all := readAirports(t)[:n]
	u := s.Begin()
	for i := 0; i < n; i += 7 {
		all[i].Altitude++
		all[i].Notes = "checked"
		mustT(t, u.Persist(&all[i]))
	}
	for i := 3; i < n; i += 11 {
		mustT(t, u.Remove(&all[i]))
	}
	_, err := u.Commit(ctx)
	mustT(t, err)
}

func digest(t *testing.T, path string) string {
	t.Helper()
	d, err := projector.Digest(path)
	mustT(t, err)
	return d
}

func replayDigest(t *testing.T, dir string, upTo uint64) string {
	t.Helper()
	target := filepath.Join(t.TempDir(), "replayed.sqlite")
	cp, err := Replay(dir, target, ReplayOptions{UpTo: upTo}, Entity[Airport]("Airport"))
	mustT(t, err)
	if cp != upTo {
		t.Fatalf("replay reached %d, want %d", cp, upTo)
	}
	return digest(t, target)
}

func TestI23_LiveEqualsRebuiltFromZeroEqualsRebuiltFromSnapshot(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	loadAirports(t, s, 400)
	m, err := s.Snapshot()
	mustT(t, err)
	mixedHistory(t, s, 600) // the tail after the snapshot
	live, n := digest(t, s.ReadModelPath()), s.Checkpoint()
	mustT(t, s.Close())
	if fromZero := replayDigest(t, dir, n); fromZero != live {
		t.Fatalf("rebuilt from zero %s != live %s", fromZero, live)
	}

	mustT(t, removeReadModel(filepath.Join(dir, ReadModelFile)))
	var first Progress
	s = openStore(t, dir, func(o *Options) {
		o.Progress = func(p Progress) {
			if first.Phase == "" {
				first = p
			}
		}
	})
	fromSnap, n2 := digest(t, s.ReadModelPath()), s.Checkpoint()
	mustT(t, s.Close())
	if first.Phase != "snapshot" || first.Total != n2-m.Seq {
		t.Fatalf("restart did not replay only the tail after snapshot %d: %+v", m.Seq, first)
	}
	if fromZero := replayDigest(t, dir, n2); fromZero != fromSnap {
		t.Fatalf("snapshot+tail %s != rebuilt from zero %s", fromSnap, fromZero)
	}
}

func TestCorruptSnapshotIsSkippedAndLogged(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s := openStore(t, dir, func(o *Options) { o.Logger = logger })
	loadAirports(t, s, 200)
	older, err := s.Snapshot()
	mustT(t, err)
	loadAirports(t, s, 300)
	newer, err := s.Snapshot()
	mustT(t, err)
	mustT(t, s.Close())
	snapFile := filepath.Join(dir, snapshots.DirName, fmt.Sprintf("%020d.sqlite", newer.Seq))
	data, err := os.ReadFile(snapFile)
	mustT(t, err)
	data[len(data)/2] ^= 0xff
	mustT(t, os.WriteFile(snapFile, data, 0o600))
	mustT(t, removeReadModel(filepath.Join(dir, ReadModelFile)))

	var first Progress
	s = openStore(t, dir, func(o *Options) {
		o.Logger = logger
		o.Progress = func(p Progress) {
			if first.Phase == "" {
				first = p
			}
		}
	})
	n := s.Checkpoint()
	live := digest(t, s.ReadModelPath())
	mustT(t, s.Close())
	if first.Phase != "snapshot" || first.Total != n-older.Seq {
		t.Fatalf("did not fall back to the older snapshot %d: %+v", older.Seq, first)
	}
	if !strings.Contains(logs.String(), "skipping invalid snapshot") || !strings.Contains(logs.String(), "snapshot_invalid") {
		t.Fatalf("corrupt snapshot not logged:\n%s", logs.String())
	}
	if replayDigest(t, dir, n) != live {
		t.Fatal("read model from the older snapshot differs from a rebuild")
	}
}

func TestSnapshotEveryNEventsKeepsNewestK(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, func(o *Options) { o.SnapshotEvery, o.SnapshotKeep = 100, 2 })
	defer s.Close()
	loadAirports(t, s, 1000) // 4 commits of 250 events: a snapshot after each
	cp := s.Checkpoint()     // runs on the writer after the last automatic snapshot
	seqs, err := s.snaps.List()
	mustT(t, err)
	if len(seqs) != 2 || seqs[0] != cp || seqs[1] != cp-250 {
		t.Fatalf("snapshots %v, checkpoint %d", seqs, cp)
	}
}
