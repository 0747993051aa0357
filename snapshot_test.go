package hikoutei

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/snapshots"
)

// The snapshot tests of the public API; that a rebuild from a snapshot
// equals the live read model (I23) is tested in internal/engine.

func TestCorruptSnapshotIsSkippedAndLogged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s := openStore(t, dir, func(o *Options) { o.Logger = logger })
	loadAirports(t, s, 200)
	older, err := s.Snapshot(ctx)
	mustT(t, err)
	loadAirports(t, s, 300)
	newer, err := s.Snapshot(ctx)
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
	n := checkpoint(t, s)
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
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir, func(o *Options) { o.SnapshotEvery, o.SnapshotKeep = 100, 2 })
	defer s.Close()
	loadAirports(t, s, 1000) // 4 commits of 250 events: a snapshot after each
	cp := checkpoint(t, s)   // runs on the writer after the last automatic snapshot
	snaps, err := snapshots.Open(dir, 2, nil)
	mustT(t, err)
	seqs, err := snaps.List()
	mustT(t, err)
	// Each snapshot is followed by the snapshot.taken event that vouches
	// for it, which does not count towards the next one.
	if len(seqs) != 2 || seqs[0] != cp-1 || seqs[1] != seqs[0]-251 {
		t.Fatalf("snapshots %v, checkpoint %d", seqs, cp)
	}
}
