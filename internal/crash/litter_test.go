package crash

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// TestKnownGap_CrashLeavesFilesNothingRemoves pins a bug the campaign
// found: a kill inside snapshots.Dir.Take leaves a .sqlite without a
// manifest (or a .sqlite.tmp) that prune never deletes, and a kill inside
// events.writeFileAtomic leaves a .lease.toml.tmp-* that no open removes.
// Correctness is unaffected (such files are ignored), but every crash at
// those instants leaks a file for good. It is skipped until the owners of
// snapshots/ and events/ fix it; run it with HIKOUTEI_KNOWN_GAPS=1.
func TestKnownGap_CrashLeavesFilesNothingRemoves(t *testing.T) {
	if os.Getenv("HIKOUTEI_KNOWN_GAPS") == "" {
		t.Skip("known gap (see the comment); HIKOUTEI_KNOWN_GAPS=1 runs it")
	}
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
