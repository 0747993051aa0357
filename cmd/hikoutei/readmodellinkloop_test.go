package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A read.sqlite that is a symbolic link to itself (a loop: stat fails
// with ELOOP, not ENOENT) is read_model_invalid: status --json prints its
// JSON with the replay that rebuilds it, and doctor fails it. Status
// printed no JSON, only "no read model in DIR … too many levels of
// symbolic links" (exit 1), and doctor called the store healthy, while
// opening the store sets the link aside and rebuilds.
func TestStatusReportsAReadModelLinkLoopInItsJSON(t *testing.T) {
	t.Parallel()
	dir := storeWithReadModelLink(t, func(path string) string { return path })
	code, jsonOut, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(jsonOut), &st); err != nil || st.ReadModelCode != "read_model_invalid" ||
		st.NextStep != "hikoutei replay --dir "+shellWord(dir) || st.LogHead == nil || *st.LogHead == 0 {
		t.Fatalf("status --json of a read.sqlite that links to itself: exit %d:\n%s\nstderr: %s", code, jsonOut, errOut)
	}
	if code, out := runCLI(t, "doctor", "--dir", dir); code == exitOK || !strings.Contains(out, "read_model_invalid") {
		t.Fatalf("doctor of a read.sqlite that links to itself: exit %d:\n%s", code, out)
	}
}
