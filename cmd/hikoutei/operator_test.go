package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/above/lab/operator"
)

// TestOperatorCampaignShort runs a few runs of the operator campaign, as
// `make operator` does with 300 (issue 29 item 3): the CLI is this test
// binary re-executed, and so is the running store's holder (which the
// hikoutei-lab command runs in `make operator`). Nothing
// acknowledged is lost, no copy is left in TMPDIR or written into a
// store, every refusal is typed, nothing panics.
func TestOperatorCampaignShort(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	res, err := operator.Run(context.Background(), operator.Config{Dir: t.TempDir(), Runs: 12, Seed: 1, Out: &out, CheckEvery: 6,
		CLI:    func(args ...string) *exec.Cmd { return cliCommand(args...) },
		Holder: func(dir string) *exec.Cmd { return operatorHoldCommand(dir) }})
	t.Log("\n" + out.String() + res.Line())
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Runs != 12 || res.Acked == 0 {
		t.Fatalf("%s\n%s", res.Line(), strings.Join(res.Problems, "\n"))
	}
}
