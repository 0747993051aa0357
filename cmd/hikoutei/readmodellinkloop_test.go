package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// A read.sqlite that is a symbolic link to itself (a loop: stat fails
// with ELOOP, not ENOENT) is as unusable as a link to a file that is
// gone: status --json still prints its JSON, naming the read model's
// state and the replay that builds it. It printed no JSON, only "no read
// model in DIR … too many levels of symbolic links" (exit 1), while
// doctor calls the store healthy and opening the store sets the link
// aside and rebuilds.
func TestStatusReportsAReadModelLinkLoopInItsJSON(t *testing.T) {
	t.Parallel()
	dir := closedStoreOf(t, 5)
	path := filepath.Join(dir, hikoutei.ReadModelFile)
	for _, s := range []string{"", "-wal", "-shm"} {
		_ = os.Remove(path + s)
	}
	mustNil(t, os.Symlink(path, path))
	code, jsonOut, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(jsonOut), &st); err != nil || st.ReadModelCode == "" || st.LogHead == nil || *st.LogHead == 0 {
		t.Fatalf("status --json of a read.sqlite that links to itself: exit %d:\n%s\nstderr: %s", code, jsonOut, errOut)
	}
}
