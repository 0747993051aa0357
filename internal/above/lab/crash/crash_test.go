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
