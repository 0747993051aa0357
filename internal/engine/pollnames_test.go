package engine

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/wakehook"
)

// What pending poll requests name stays bounded when nothing takes it (a
// store with routes: its poller polls every tab) however many distinct
// sheetIds the wakes name.
func TestPollNamesStayBoundedWhenNothingTakesThem(t *testing.T) {
	var n pollNames
	for id := int64(0); id < 10_000; id++ {
		n.add(wakehook.Hint{Sheets: []int64{id}})
	}
	if !n.h.All || len(n.h.Sheets) != 0 {
		t.Fatalf("after 10,000 distinct sheetIds: All=%v, %d sheets kept", n.h.All, len(n.h.Sheets))
	}
}
