package main

import (
	"context"
	"strings"
	"testing"
)

// runLab runs the command in this process and returns its exit code and
// everything it printed.
func runLab(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out strings.Builder
	code := run(context.Background(), args, &out, &out)
	return code, out.String()
}

// The campaigns are this command's: each make target's command line is
// one, and a mistyped flag is a usage error.
func TestLabHasEveryCampaign(t *testing.T) {
	root := newRootCmd()
	for _, name := range []string{"crash", "storage", "storage-run", "converge", "evolve", "operator", "operator-hold", "loggen"} {
		if c, _, err := root.Find([]string{name}); err != nil || c.Name() != name {
			t.Errorf("hikoutei-lab has no %s command (%v)", name, err)
		}
	}
	if code, out := runLab(t, "converge", "--runz", "1"); code != exitUsage {
		t.Fatalf("a mistyped flag: exit %d:\n%s", code, out)
	}
}

// The operator campaign needs the product binary: without one beside it
// or named, it says how to get one (usage, exit 2).
func TestOperatorCampaignNamesTheProductBinary(t *testing.T) {
	code, out := runLab(t, "operator", "--runs", "1", "--hikoutei", t.TempDir()+"/none")
	if code != exitUsage || !strings.Contains(out, "go build -o") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}
