package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// TestI37_OutboxShowValuesPrintsNoPersonalValueNorItsSealedText: a queued
// write of a personal field shows as ⟦personal⟧, and as ⟦erased⟧ once its
// subject was erased; never the value, never the hk1e: text.
func TestI37_OutboxShowValuesPrintsNoPersonalValueNorItsSealedText(t *testing.T) {
	dir := t.TempDir()
	sheet := hikouteitest.NewSheet(t)
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true, Sync: sheet.SyncOptions(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		u := s.Begin()
		if err := u.Persist(&member{ID: fmt.Sprintf("M%d", i), Name: memberName(i), Tier: "gold"}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil { // the writes stay queued
		t.Fatal(err)
	}
	eraseCLI(t, dir, "M1")
	code, out, errOut := runSplit("outbox", "list", "--dir", dir, "--json", "--limit", "0")
	if code != exitOK {
		t.Fatalf("outbox list: exit %d %s", code, errOut)
	}
	shownFor := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e outboxEntryJSON
		if json.Unmarshal([]byte(line), &e) != nil || e.Entity != "Member" || !strings.HasSuffix(e.Tab, "_System") {
			continue
		}
		code, show, errOut := runSplit("outbox", "show", "--dir", dir, "--values", "--json", e.ID)
		noPersonalText(t, "outbox show --values", show+errOut, 1, 2)
		var got outboxEntryJSON
		if code != exitOK || json.Unmarshal([]byte(show), &got) != nil {
			t.Fatalf("outbox show %s: exit %d\n%s%s", e.ID, code, show, errOut)
		}
		shownFor[e.EntityID], _ = got.Values["name"].(string)
	}
	if shownFor["M1"] != hikoutei.Erased || shownFor["M2"] != personalMarker {
		t.Fatalf("outbox show --values shows the names as %q, want M1 %s and M2 %s", shownFor, hikoutei.Erased, personalMarker)
	}
}
