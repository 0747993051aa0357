package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// loggen writes a store whose hash chain audit verify walks from genesis
// over every generated event; a second run into the same folder is a
// usage error, not an overwrite.
func TestLoggenWritesAVerifiableStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	code, out := runLab(t, "loggen", "--events", "10000", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "generated 10000 events") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	rep, err := hikoutei.VerifyDir(context.Background(), dir, hikoutei.VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records < 10000 || rep.FirstChained > 1 {
		t.Fatalf("verify walked %d records (first chained %d), want the 10,000 generated ones chained", rep.Records, rep.FirstChained)
	}
	if code, out := runLab(t, "loggen", "--events", "10", "--dir", dir); code != exitUsage {
		t.Fatalf("second run: exit %d:\n%s", code, out)
	}
	if code, out := runLab(t, "loggen", "--dir", dir+"2"); code != exitUsage {
		t.Fatalf("no --events: exit %d:\n%s", code, out)
	}
}
