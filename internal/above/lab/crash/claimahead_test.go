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

// TestAKillAtTheClaimAheadUnderEmulatorFaultsIsRecovered arms
// dispatch.after_claim_ahead at its first hit in each of four runs with
// the emulator's faults on (429s and 5xx on the writes whose settlement
// is pending when the next batch is claimed), then the campaign's checks:
// nothing acknowledged lost, no duplicate rows, the read model equals its
// rebuild and its kept outbox counts the outbox, the sheet converges.
func TestAKillAtTheClaimAheadUnderEmulatorFaultsIsRecovered(t *testing.T) {
	if testing.Short() {
		t.Skip("crash campaign: -short")
	}
	var armed []string
	for _, at := range []string{"1", "1", "1", "1"} {
		armed = append(armed, failpoint.DispatchAfterClaimAhead+"=crash@"+at)
	}
	var out strings.Builder
	res, err := Run(context.Background(), Config{Dir: t.TempDir(), Kills: len(armed), Seed: 19, Faults: FaultsOn, Spawn: spawnSelf,
		Armed: armed, Out: &out, QuiesceTimeout: 60 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	// Under faults a run may end (its seeded kill) before any full batch's
	// write returned, so not every armed run reaches the failpoint.
	if got := res.Failpoints[failpoint.DispatchAfterClaimAhead]; got == 0 {
		t.Errorf("failpoint fired in none of the %d runs", len(armed))
	}
	if !res.OK() {
		t.Fatalf("%s\n%s", res.Line(), strings.Join(res.Problems, "\n"))
	}
}
