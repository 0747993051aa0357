package main

import (
	"encoding/json"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// seal of a closed store moves its older records into a segment; audit
// verify walks from the first record across it, closed and running (a
// copy of the log beside the segments); a running store refuses seal.
func TestI38_SealCommandSealsAClosedStoreAndAuditVerifyWalksAcrossTheSegment(t *testing.T) {
	t.Parallel()
	s := openItemStore(t, 40)
	dir := s.Dir()
	if code, out := runCLI(t, "seal", "--dir", dir, "--keep", "5"); code == exitOK || !strings.Contains(out, "store_locked") {
		t.Fatalf("seal of a running store: exit %d:\n%s", code, out)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSplit("seal", "--dir", dir, "--keep", "5", "--json")
	var rep sealJSON
	if code != exitOK || json.Unmarshal([]byte(out), &rep) != nil || rep.First != 1 || rep.Records == 0 || rep.Seq != rep.Last+6 {
		t.Fatalf("seal --keep 5: exit %d:\n%s%s", code, out, errOut)
	}
	code, out = runCLI(t, "audit", "verify", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "head") {
		t.Fatalf("audit verify after the seal: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "doctor", "--dir", dir); code != exitOK {
		t.Fatalf("doctor after the seal: exit %d:\n%s", code, out)
	}
	if code, out = runCLI(t, "seal", "--dir", dir); code != exitUsage {
		t.Fatalf("seal without --below or --keep: exit %d:\n%s", code, out)
	}
	running, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Operation: "seal-test"}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer running.Close()
	code, text := runCLIWithin(t, "audit", "verify", "--dir", dir)
	if code != exitOK || !strings.Contains(text, "verified a copy of its log") {
		t.Fatalf("audit verify of the running sealed store: exit %d:\n%s", code, text)
	}
}
