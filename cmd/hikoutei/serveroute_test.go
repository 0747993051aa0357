package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

type part struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
}

// serve --route Part=ID syncs Part's tabs to that spreadsheet and the
// other entities to --spreadsheet; /healthz lists the routed one under
// sync_routes by its target, and no log line carries either id.
func TestServeRouteSendsAnEntityToAnotherSpreadsheet(t *testing.T) {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"), hikoutei.Entity[part]("Part"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	u.Persist(&item{ID: "a", Name: "an item"})
	u.Persist(&part{ID: "b", Name: "a part"})
	if _, err := u.Commit(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()

	emu := emulator.New(emulator.Options{AutoCreate: true})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	var logs bytes.Buffer
	cmd := &cobra.Command{}
	cmd.SetErr(&logs)
	f := serveFlags{dir: dir, spreadsheet: "1ServeMainSheetId", endpoint: srv.URL, httpAddr: "127.0.0.1:0",
		routes: []string{"Part=1ServePartsSheetId"}}
	go func() { done <- serve(ctx, cmd, f, func(a string) { ready <- a }) }()
	addr := <-ready
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(get(t, "http://"+addr+"/metrics"), `hikoutei_outbox_effects{state="applied"} 2`) {
		if time.Now().After(deadline) {
			t.Fatalf("the service did not apply the store's backlog:\n%s", get(t, "http://"+addr+"/metrics"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h := get(t, "http://"+addr+"/healthz"); !strings.Contains(h, `"sync_routes":[{"spreadsheet":"ss-`) || !strings.Contains(h, `"sync":"ok"`) {
		t.Fatalf("healthz %s", h)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rows, err := emu.Person("1ServePartsSheetId").Displayed("Part_System"); err != nil || len(rows) != 2 {
		t.Fatalf("Part_System of the routed spreadsheet: %v, %v", rows, err)
	}
	if _, err := emu.Person("1ServeMainSheetId").Displayed("Part_System"); err == nil {
		t.Fatal("the main spreadsheet has Part_System")
	}
	if strings.Contains(logs.String(), "1ServeMainSheetId") || strings.Contains(logs.String(), "1ServePartsSheetId") {
		t.Fatal("a log line carries a spreadsheet id")
	}
}

// A --route without ENTITY=SPREADSHEET is a usage error that never
// echoes what it was given (it may be a spreadsheet id).
func TestServeRouteRefusesAMalformedFlag(t *testing.T) {
	for _, bad := range []string{"1ServePartsSheetId", "=1ServePartsSheetId", "Part="} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"serve", "--dir", t.TempDir(), "--spreadsheet", "1ServeMainSheetId", "--sheets-endpoint", "http://127.0.0.1:1",
			"--route", bad}, &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), "--route takes ENTITY=SPREADSHEET") ||
			strings.Contains(stderr.String(), "1ServePartsSheetId") {
			t.Fatalf("--route %s: exit %d, stderr %q", bad, code, stderr.String())
		}
	}
}

// A --route naming an entity the store does not declare fails the start
// with its code, before any worker runs.
func TestServeRouteRefusesAnUndeclaredEntity(t *testing.T) {
	dir := t.TempDir()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{}, hikoutei.Entity[item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	var stdout, stderr bytes.Buffer
	code := run([]string{"serve", "--dir", dir, "--spreadsheet", "1ServeMainSheetId", "--sheets-endpoint", "http://127.0.0.1:1",
		"--route", "Part=1ServePartsSheetId"}, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "sync_route_entity_unknown") || strings.Contains(stderr.String(), "1Serve") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}
