package main

import (
	"context"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// TestStatusListsUnwritableValuesWithoutTheValue: a value Google Sheets
// cannot hold shows in status as a count by reason and a line naming the
// entity, key, field and tab, never the value.
func TestStatusListsUnwritableValuesWithoutTheValue(t *testing.T) {
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Sync: sheet.SyncOptions()}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	u := s.Begin()
	if err := u.Persist(&item{ID: "big", Name: "SECRET" + strings.Repeat("x", 50_000)}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.Drain(context.Background())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "unwritable values") || !strings.Contains(out, " 1 (value_too_large 1)") ||
		!strings.Contains(out, "Item big.name") || !strings.Contains(out, "value_too_large on Item_System (50006 characters)") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "SECRET") {
		t.Fatal("status printed the value")
	}
	code, out = runCLI(t, "status", "--dir", dir, "--json")
	if code != exitOK || !strings.Contains(out, `"reason":"value_too_large"`) || strings.Contains(out, "SECRET") {
		t.Fatalf("json exit %d:\n%s", code, out)
	}
}
