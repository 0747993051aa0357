//go:build failpoints

package crash

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// TestCrashLitterIsRemovedOnTheNextOpen pins a bug the campaign found: a
// kill inside snapshots.Dir.Take left a .sqlite without a manifest (or a
// .sqlite.tmp) that prune never deleted, and a kill inside the atomic
// lease.toml write left a .lease.toml.tmp-* that no open removed. The next
// open now removes both.
func TestCrashLitterIsRemovedOnTheNextOpen(t *testing.T) {
	var out strings.Builder
	res, err := Run(context.Background(), Config{Dir: t.TempDir(), Kills: 2, Seed: 3, Faults: FaultsOff, Spawn: spawnSelf,
		Armed: []string{failpoint.SnapshotBeforeManifest + "=crash@2", failpoint.LeaseFileBeforeRename + "=crash"},
		Out:   &out, QuiesceTimeout: 60 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil || !res.OK() {
		t.Fatalf("%v %s\n%s", err, res.Line(), out.String())
	}
	if res.Failpoints[failpoint.SnapshotBeforeManifest] != 1 || res.Failpoints[failpoint.LeaseFileBeforeRename] != 1 {
		t.Fatalf("failpoints fired %v", res.Failpoints)
	}
	if len(res.Litter) != 0 {
		t.Fatalf("files left behind by the crashes, never removed: %v", res.Litter)
	}
}
