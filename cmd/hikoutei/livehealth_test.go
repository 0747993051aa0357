package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// runningStore opens a store of stocks in this process the way serve
// runs one: sync workers running against sheet, the administrative
// channel served, wake-ups in process. The pollers and the
// reconciliation run only when asked (their timers are an hour), so a
// poll observed in a test was requested.
func runningStore(t *testing.T, dir string, sheet *hikouteitest.Sheet, o hikoutei.Options) *hikoutei.Store {
	t.Helper()
	t.Setenv(hikoutei.EnvNATSURL, "")
	if sheet != nil {
		so := sheet.SyncOptions()
		so.Manual, so.PollingInterval, so.FullScanInterval, so.ReconcileInterval = false, time.Hour, time.Hour, time.Hour
		o.Sync = so
	}
	o.HeartbeatInterval = -1
	s, err := hikoutei.Open(context.Background(), dir, o, hikoutei.Entity[stock]("Stock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// statusJSON runs `status --json` and decodes it.
func statusJSON(t *testing.T, dir string) storeStatus {
	t.Helper()
	code, out, errOut := runSplit("status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(out), &st); code != exitOK || err != nil {
		t.Fatalf("status --json: exit %d %v\n%s%s", code, err, out, errOut)
	}
	return st
}

// TestStatusShowsTheRunningStoresSyncHealthByTab: while a process serves
// the store, status shows the sync health that process knows — every
// entity tab, also once every effect has settled (the read model alone
// then names no tab) —, says so, and prints the per-tab table.
func TestStatusShowsTheRunningStoresSyncHealthByTab(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	s := runningStore(t, dir, sheet, hikoutei.Options{})
	commitStocks(t, s, &stock{ID: "1", Qty: 1})
	waitSettled(t, s)
	st := statusJSON(t, dir)
	if !st.Running || st.SyncHealthSource != healthFromRunningStore || st.SyncHealthUnreachable != "" || len(st.SyncHealth) != 1 {
		t.Fatalf("status of a running store: running %v source %q unreachable %q health %+v", st.Running, st.SyncHealthSource,
			st.SyncHealthUnreachable, st.SyncHealth)
	}
	var tabs []string
	for _, tab := range st.SyncHealth[0].Tabs {
		tabs = append(tabs, tab.Tab)
	}
	if !slices.Equal(tabs, []string{"Stock_System", "Stock_Input"}) {
		t.Fatalf("tabs %v, want Stock_System and Stock_Input", tabs)
	}
	code, out, errOut := runSplit("status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "\nsync "+st.SyncHealth[0].Spreadsheet+": ") || !strings.Contains(out, "\nStock_Input ") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
}

// TestStatusSaysWhyARunningStoreGaveNoSyncHealth: a process holds the
// store but serves no administrative channel; status shows the read
// model's view and names why with a stable code instead of a silent
// empty list.
func TestStatusSaysWhyARunningStoreGaveNoSyncHealth(t *testing.T) {
	dir := t.TempDir()
	runningStore(t, dir, nil, hikoutei.Options{NoAdmin: true})
	st := statusJSON(t, dir)
	if !st.Running || st.SyncHealthSource != healthFromReadModel || st.SyncHealthUnreachable != "admin_channel_absent" {
		t.Fatalf("running %v source %q unreachable %q", st.Running, st.SyncHealthSource, st.SyncHealthUnreachable)
	}
	code, out, _ := runSplit("status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "sync health: from the read model only; the running process did not answer (admin_channel_absent)") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
}

// TestPollWhileTheStoreRunsAsksItOverTheAdministrativeChannel: `poll
// --dir` with no NATS configured reaches the process serving the store,
// whose pollers (on an hour's timer) then take a person's edit.
func TestPollWhileTheStoreRunsAsksItOverTheAdministrativeChannel(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	s := runningStore(t, dir, sheet, hikoutei.Options{})
	commitStocks(t, s, &stock{ID: "1", Qty: 1})
	waitSettled(t, s)
	if err := sheet.Person().Type("Stock_Input", qtyCell(t, sheet, "1"), "7"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runSplit("poll", "--dir", dir, "--json")
	var res pollResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil || res.Via != "admin_channel" {
		t.Fatalf("poll: exit %d %v\n%s%s", code, err, out, errOut)
	}
	waitFor(t, "the poll takes the person's edit", func() bool {
		got, err := hikoutei.Get[stock](context.Background(), s, "1")
		return err == nil && got.Qty == 7
	})
}

// TestPollWithNothingServingTheStoreSaysHowToRunIt: no process serves the
// store and no NATS is configured: exit 1 with store_not_running and the
// command that starts the service, not a usage error.
func TestPollWithNothingServingTheStoreSaysHowToRunIt(t *testing.T) {
	dir := t.TempDir()
	runningStore(t, dir, nil, hikoutei.Options{}).Close()
	code, _, errOut := runSplit("poll", "--dir", dir)
	if code != exitFailure || !strings.Contains(errOut, "store_not_running") || !strings.Contains(errOut, "hikoutei serve --dir "+dir) {
		t.Fatalf("poll: exit %d\n%s", code, errOut)
	}
}

// waitSettled waits until s's outbox holds nothing unsettled (every
// effect written to the sheet).
func waitSettled(t *testing.T, s *hikoutei.Store) {
	t.Helper()
	waitFor(t, "every effect settles", func() bool {
		st, err := s.Stats(context.Background())
		if err != nil {
			return false
		}
		for _, state := range aggregates.Unsettled() {
			if st.Outbox[state] > 0 {
				return false
			}
		}
		return true
	})
}

// TestStatusOfAClosedStoreSaysItsSyncHealthIsTheReadModels: with no
// process holding the store, status says its sync health comes from the
// read model, and a target whose effects all settled prints a sentence
// instead of an empty table.
func TestStatusOfAClosedStoreSaysItsSyncHealthIsTheReadModels(t *testing.T) {
	dir := t.TempDir()
	s := runningStore(t, dir, hikouteitest.NewSheet(t), hikoutei.Options{})
	commitStocks(t, s, &stock{ID: "1", Qty: 1})
	waitSettled(t, s)
	s.Close()
	st := statusJSON(t, dir)
	if st.Running || st.SyncHealthSource != healthFromReadModel || st.SyncHealthUnreachable != "" || len(st.SyncHealth) != 1 {
		t.Fatalf("running %v source %q unreachable %q health %+v", st.Running, st.SyncHealthSource, st.SyncHealthUnreachable, st.SyncHealth)
	}
	code, out, _ := runSplit("status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "sync health: from the read model (no process holds the store)") ||
		!strings.Contains(out, "no tab to show") || strings.Contains(out, "\nTAB ") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
}

// TestPollOfAStoreRunningWithoutSyncSaysSo: the process serving the
// store answers sync_not_configured (exit 1): it has no pollers.
func TestPollOfAStoreRunningWithoutSyncSaysSo(t *testing.T) {
	dir := t.TempDir()
	runningStore(t, dir, nil, hikoutei.Options{})
	code, _, errOut := runSplit("poll", "--dir", dir)
	if code != exitFailure || !strings.Contains(errOut, "sync_not_configured") {
		t.Fatalf("poll: exit %d\n%s", code, errOut)
	}
}
