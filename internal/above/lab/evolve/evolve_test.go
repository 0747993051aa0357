package evolve

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestI35_EvolutionCampaignShort is the short evolution campaign: a few
// seeded runs in which the store restarts with its entity changed along
// the graph of shapes while the application commits and a person edits;
// nothing acknowledged is lost, no edit is lost, every tab converges in
// the newest layout, health never lies, the log replays to the live read
// model, and every change is recorded (or refused) as its class says. The
// margin is 3 s here, not the campaign's 1 s: this runs in a race build
// beside every other package's tests (make test); make evolve holds the
// 1 s bound.
func TestI35_EvolutionCampaignShort(t *testing.T) {
	runs, seed := 3, uint64(28)
	if v, err := strconv.Atoi(os.Getenv("EVOLVE_TEST_RUNS")); err == nil {
		runs = v
	}
	if v, err := strconv.ParseUint(os.Getenv("EVOLVE_TEST_SEED"), 10, 64); err == nil {
		seed = v
	}
	first, _ := strconv.Atoi(os.Getenv("EVOLVE_TEST_FIRST"))
	var out bytes.Buffer
	dir := t.TempDir()
	if d := os.Getenv("EVOLVE_TEST_KEEP"); d != "" {
		dir = d
	}
	res, err := Run(context.Background(), Config{Dir: dir, Keep: os.Getenv("EVOLVE_TEST_KEEP") != "", Runs: runs, Seed: seed, Steps: 30, Margin: 3 * time.Second, Out: &out,
		FirstRun: first, Verbose: os.Getenv("EVOLVE_TEST_VERBOSE") != ""})
	t.Log("\n" + out.String() + res.Counts() + "\n" + res.Line())
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Runs != runs {
		t.Fatalf("%s\n%v", res.Line(), res.Problems)
	}
	if res.Changes == 0 {
		t.Fatal("no shape changed: the campaign proved nothing")
	}
}
