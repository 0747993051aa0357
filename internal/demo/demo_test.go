package demo

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemoSmallRun is the smaller demo run `make test` includes: 300
// airports end to end without Google's latency model.
func TestDemoSmallRun(t *testing.T) {
	var out bytes.Buffer
	sum, err := Run(context.Background(), Config{Dir: t.TempDir(), Data: "../../testdata/data/airports.json", Rows: 300, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if sum.Rows != 300 || sum.SheetRows != 300 || sum.Mismatches != 0 || sum.Conflicts < 1 || sum.Resolved < 1 || sum.Quarantined < 3 {
		t.Fatalf("summary %+v\n%s", sum, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != sum.Line() || !strings.HasPrefix(last, "summary: rows=300 sheet_rows=300 mismatches=0 ") {
		t.Fatalf("last line %q", last)
	}
}
