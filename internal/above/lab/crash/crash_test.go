//go:build failpoints

// The campaign arms failpoints, so its tests exist only in builds that
// have them: go test -tags failpoints (make test does).

package crash

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// TestMain turns this test binary into a campaign child when WorkerEnv is
// set: it runs the workload until it is killed.
func TestMain(m *testing.M) {
	if os.Getenv(WorkerEnv) != "" {
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		if _, err := WorkerFromEnv(context.Background(), os.Stdout, logger); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func spawnSelf() *exec.Cmd { return exec.Command(os.Args[0], "-test.run=^$") }

// TestCrashCampaignShort is the short campaign `make test` runs: 10 kills
// (a third of them at failpoints), the fault mix on every other run, then
// quiescence and the full set of checks.
func TestCrashCampaignShort(t *testing.T) {
	if testing.Short() {
		t.Skip("crash campaign: -short")
	}
	var out strings.Builder
	res, err := Run(context.Background(), Config{Dir: t.TempDir(), Kills: 10, Seed: 10, Faults: FaultsMixed, Spawn: spawnSelf,
		Out: &out, QuiesceTimeout: 60 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Log("\n" + out.String() + res.Line())
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 10 || !res.OK() || res.Acked == 0 {
		t.Fatalf("%s (acked %d)\n%s", res.Line(), res.Acked, strings.Join(res.Problems, "\n"))
	}
}

// TestEachFailpointCrashIsRecovered arms every failpoint in turn (the
// second hit, the first for lease.toml which is written once per open) and
// requires that the child died there, then the same checks as the
// campaign: nothing acknowledged lost, no duplicate rows, the read model
// equals its rebuild, the sheet converges.
func TestEachFailpointCrashIsRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("crash campaign: -short")
	}
	var armed []string
	for _, name := range failpoint.Workload {
		at := "2"
		if name == failpoint.LeaseFileBeforeRename || name == failpoint.EraseAfterEvent || name == failpoint.KeyringBeforeRename ||
			strings.HasPrefix(name, "compact.") {
			at = "1" // once per open, per compaction; an erasure or two per run
		}
		armed = append(armed, name+"=crash@"+at)
	}
	var out strings.Builder
	res, err := Run(context.Background(), Config{Dir: t.TempDir(), Kills: len(armed), Seed: 7, Faults: FaultsOff, Spawn: spawnSelf,
		Armed: armed, Out: &out, QuiesceTimeout: 60 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range failpoint.Workload {
		if res.Failpoints[name] != 1 {
			t.Errorf("failpoint %s fired %d times, want 1", name, res.Failpoints[name])
		}
	}
	if !res.OK() {
		t.Fatalf("%s\n%s", res.Line(), strings.Join(res.Problems, "\n"))
	}
}

// TestI38_EachSealFailpointWithAnObjectStoreIsRecovered runs the campaign
// with its segments in an object store (a gocloud.dev/blob file bucket)
// and arms each step of a seal in turn — bytes written but the upload not
// completed, uploaded, read back and checked, records removed but not
// committed, committed — then the campaign's checks: every sequence in
// exactly one of log.db and a segment of the bucket (read from the
// bucket), the chain verified through the bucket, nothing acknowledged
// lost. The store's own segments folder stays empty: every seal went to
// the bucket.
func TestI38_EachSealFailpointWithAnObjectStoreIsRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("crash campaign: -short")
	}
	var armed []string
	for _, name := range failpoint.Workload {
		if strings.HasPrefix(name, "seal.") {
			armed = append(armed, name+"=crash@2")
		}
	}
	dir := t.TempDir()
	var out strings.Builder
	res, err := Run(context.Background(), Config{Dir: dir, Kills: len(armed), Seed: 11, Faults: FaultsOff, Spawn: spawnSelf, Bucket: true,
		Armed: armed, Out: &out, QuiesceTimeout: 60 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range armed {
		if name, _, _ := strings.Cut(spec, "="); res.Failpoints[name] != 1 {
			t.Errorf("failpoint %s fired %d times, want 1", name, res.Failpoints[name])
		}
	}
	if !res.OK() {
		t.Fatalf("%s\n%s", res.Line(), strings.Join(res.Problems, "\n"))
	}
	if local, _ := os.ReadDir(filepath.Join(dir, "segments")); len(local) != 0 {
		t.Errorf("the store's segments folder holds %d files; every seal should have gone to the bucket", len(local))
	}
	if objs, err := os.ReadDir(dir + BucketSuffix); err != nil || len(objs) == 0 {
		t.Fatalf("the bucket holds no segment (%v)", err)
	}
}
