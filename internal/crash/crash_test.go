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
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs != 10 || !res.OK() || res.Acked == 0 {
		t.Fatalf("%s (acked %d)\n%s", res.Line(), res.Acked, strings.Join(res.Problems, "\n"))
	}
}
