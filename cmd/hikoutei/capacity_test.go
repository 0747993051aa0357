package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// status shows the running store's spreadsheet_capacity warning (asked
// over its administrative channel), in text and in --json with the
// capacity.
func TestStatusShowsTheRunningStoresSpreadsheetCapacityWarning(t *testing.T) {
	dir := t.TempDir()
	clock := events.NewManualClock(time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC))
	sheet := hikouteitest.NewSheet(t, func(c *gsheets.Config) { c.Now = clock.Now })
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Sync: sheet.SyncOptions(),
		NATS: &hikoutei.NATSOptions{Disabled: true}}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h := hikouteitest.New(t, s)
	if _, err := sheet.Person().AddTab("Archive", 850_000, 10); err != nil {
		t.Fatal(err)
	}
	clock.Advance(gsheets.GridRefresh)
	if _, err := h.Reconcile(t.Context()); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "warning spreadsheet_capacity: ") || !strings.Contains(out, "of 10000000 cells") {
		t.Fatalf("status exit %d:\n%s", code, out)
	}
	code, out = runCLI(t, "status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(out), &st); code != exitOK || err != nil || len(st.SyncHealth) != 1 {
		t.Fatalf("status --json exit %d (%v):\n%s", code, err, out)
	}
	got := st.SyncHealth[0]
	if c := got.Capacity; st.SyncHealthSource != healthFromRunningStore || c == nil || c.Cells < 8_500_000 || c.Limit != 10_000_000 ||
		c.FullAt == nil || len(got.Warnings) != 1 || got.Warnings[0].Reason != "spreadsheet_capacity" {
		t.Fatalf("status --json sync health: %s", out)
	}
}
