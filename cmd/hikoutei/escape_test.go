package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// memo has a field people edit on the sheet.
type memo struct {
	ID   string `hikoutei:"id,pk"`
	Text string `hikoutei:"text,user"`
}

// hostile is what a person typed into a cell: set the terminal's title,
// clear the screen, print red text, ring the bell, reverse the text.
const hostile = "\x1b]0;PWNED-TITLE\a\x1b[2J\x1b[31mfake: all good\u202e"

// F7: conflicts show (and list), the way an operator reads a person's
// value, never writes a control character to the terminal: the value is
// printed quoted, ESC as \x1b and BEL as \a.
func TestF7_ConflictsShowEscapesControlCharactersInAPersonsValue(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true}, hikoutei.Entity[memo]("Memo"))
	if err != nil {
		t.Fatal(err)
	}
	h := hikouteitest.New(t, s)
	commitMemo := func(text string) {
		u := s.Begin()
		if err := u.Persist(&memo{ID: "m1", Text: text}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	commitMemo("first")
	h.Drain(ctx)
	rows, err := sheet.Person().Displayed("Memo_Input")
	if err != nil {
		t.Fatal(err)
	}
	cell := fmt.Sprintf("%c2", 'A'+slices.Index(rows[0], "text"))
	if err := sheet.Person().Type("Memo_Input", cell, hostile); err != nil {
		t.Fatal(err)
	}
	commitMemo("system's")
	h.Drain(ctx)
	if _, err := h.Poll(ctx); err != nil {
		t.Fatal(err)
	}
	h.Drain(ctx)
	open, err := s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) != 1 {
		t.Fatalf("open conflicts %+v %v", open, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"conflicts", "show", "--dir", dir, open[0].ID}, {"conflicts", "list", "--dir", dir}, {"audit", "--dir", dir}} {
		code, out := runCLI(t, args...)
		if code != exitOK {
			t.Fatalf("%v: exit %d %s", args, code, out)
		}
		if strings.ContainsAny(out, "\x1b\a\u202e") {
			t.Fatalf("%v printed a control character:\n%q", args, out)
		}
		if args[1] == "show" && !strings.Contains(out, `sheet value   "\x1b]0;PWNED-TITLE\a\x1b[2J\x1b[31mfake: all good\u202e"`) {
			t.Fatalf("conflicts show does not print the value escaped:\n%s", out)
		}
	}
}

// F7, the class: every printer of human output that shows text from
// outside (a value, a key, a tab, an anchor, a reason, an error quoting
// one) escapes control characters.
func TestF7_HumanOutputEscapesControlCharacters(t *testing.T) {
	var b strings.Builder
	if err := printConflict(&b, conflictRow{ID: "c" + hostile, Entity: "E", EntityID: hostile, Field: "f", SystemValue: "\a", SheetValue: hostile}); err != nil {
		t.Fatal(err)
	}
	if err := printOutboxShow(&b, outboxEntryJSON{ID: "e1", Tab: hostile, Anchor: hostile, Entity: "E", EntityID: hostile,
		Fields: []string{"text"}, Values: map[string]any{"text": hostile}}, false); err != nil {
		t.Fatal(err)
	}
	if err := printQuarantineShow(&b, quarantineEntryJSON{ID: "q1", Reason: "r", Tab: hostile, Anchor: hostile, Column: hostile}, false); err != nil {
		t.Fatal(err)
	}
	var errOut strings.Builder
	exitCode(newRootCmd(), fmt.Errorf("conflict_not_found: %s", hostile), &errOut)
	b.WriteString(errOut.String())
	if strings.ContainsAny(b.String(), "\x1b\a\u202e") {
		t.Fatalf("raw control characters in:\n%q", b.String())
	}
	if !strings.Contains(errOut.String(), `\x1b]0;PWNED-TITLE\a`) {
		t.Fatalf("error not escaped: %q", errOut.String())
	}
	if got := shown("plain text, ünïcode"); got != "plain text, ünïcode" {
		t.Fatalf("plain text changed: %q", got)
	}
}
