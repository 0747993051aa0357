package main

import (
	"encoding/json"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// conflicts show prints, besides the conflict's fence and values, how it
// was resolved, by whom and when once it is resolved (and none of these
// while it is open).
func TestConflictsShowSaysHowByWhomAndWhenAConflictWasResolved(t *testing.T) {
	dir := t.TempDir()
	conflictID, _ := conflictAndQuarantine(t, dir, hikouteitest.NewSheet(t))
	show := func() conflictRow {
		t.Helper()
		code, out := runCLI(t, "conflicts", "show", "--json", "--dir", dir, conflictID)
		var row conflictRow
		if err := json.Unmarshal([]byte(out), &row); code != exitOK || err != nil {
			t.Fatalf("conflicts show: exit %d %v\n%s", code, err, out)
		}
		return row
	}
	if open := show(); open.State != "open" || open.Resolution != "" || open.ResolvedBy != "" || open.ResolvedAt != "" || open.SheetValue == "" {
		t.Fatalf("open conflict shows %+v", open)
	}
	if code, out := runCLIWithin(t, "conflicts", "resolve", "--dir", dir, conflictID, "--keep-system"); code != exitOK {
		t.Fatalf("conflicts resolve: exit %d\n%s", code, out)
	}
	got := show()
	if got.State != "resolved" || got.Resolution != string(events.ResolutionAcknowledged) || got.ResolvedBy != string(hikoutei.ActorCLI) {
		t.Fatalf("resolved conflict shows %+v", got)
	}
	if at, err := time.Parse(time.RFC3339Nano, got.ResolvedAt); err != nil || at.IsZero() {
		t.Fatalf("resolved_at %q: %v", got.ResolvedAt, err)
	}
}
