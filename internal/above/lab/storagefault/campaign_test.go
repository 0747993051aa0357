//go:build failpoints

package storagefault

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestStorageCampaignShort runs two runs of every kind, as `make storage`
// does with more: nothing acknowledged is lost, nothing panics, no damage
// goes unreported.
func TestStorageCampaignShort(t *testing.T) {
	var out strings.Builder
	res, err := Run(context.Background(), Config{Dir: t.TempDir(), Runs: 2 * len(Kinds), Seed: 1, Out: &out,
		RunTimeout: testRunTimeout, Spawn: func() *exec.Cmd { return exec.Command(os.Args[0]) }})
	t.Log("\n" + out.String() + res.Line())
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.Runs != 2*len(Kinds) {
		t.Fatalf("%s\n%s", res.Line(), strings.Join(res.Problems, "\n"))
	}
}
