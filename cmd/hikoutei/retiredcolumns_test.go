package main

import (
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/observe"
)

// status names a tab that follows a change of shape (migrating) and the
// retired columns a migration kept, with what to do about them.
func TestStatusNamesMigratingTabsAndRetiredColumns(t *testing.T) {
	var out strings.Builder
	h := syncHealthJSON{Spreadsheet: "ss-1", State: "migrating", Tabs: []observe.TabHealthReport{
		{Tab: "Rec_System", State: "migrating"},
		{Tab: "Rec_Input", State: "ok", Notice: "column_retired", Retired: []string{"notes (retired)"}}}}
	if err := printSyncHealth(&out, h); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"migrating (a tab follows the entities' new shape)", "Rec_System  migrating", "column_retired",
		"Rec_Input keeps retired columns after its anchor", "notes (retired)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("status output lacks %q:\n%s", want, got)
		}
	}
}
