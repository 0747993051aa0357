package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// After an update landed on another row (C06: a person deleted a row
// between the dispatch's read and its write), status counts the
// misdirected write and the cell it overwrote, in text and JSON.
func TestStatusCountsMisdirectedWritesAndTheirCells(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, Sync: sheet.SyncOptions()}, itemDef)
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	put := func(id, name string) {
		u := s.Begin()
		if err := u.Persist(&item{ID: id, Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "one")
	put("b", "two")
	h.Drain(context.Background())
	put("b", "renamed")
	sheet.Emulator.ScriptFaults(emulator.Fault{Kind: emulator.FaultInterleave, Match: emulator.MatchWrites, Interleave: func() {
		if err := sheet.Person().DeleteRows("Item_System", 2, 1); err != nil { // a's row: b's update lands below
			t.Error(err)
		}
	}})
	if _, err := h.Dispatch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	code, out := runCLI(t, "status", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "misdirected writes") || !strings.Contains(out, "1 (cells overwritten: 1;") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	_, out = runCLI(t, "status", "--dir", dir, "--json")
	var st storeStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.MisdirectedWrites != 1 || st.MisdirectedCells != 1 {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
}
