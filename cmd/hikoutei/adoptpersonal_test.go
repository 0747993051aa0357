package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// adoptedName is the personal value of the Members tab people kept.
const adoptedName = "Ottoline Vexbridge-Marlowe"

// memberSheetStore is a closed store declaring Member (a personal field),
// holding n members, synced once to a sheet that also holds a Members tab
// people kept.
func memberSheetStore(t *testing.T, n int) (string, *hikouteitest.Sheet) {
	t.Helper()
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	p := sheet.Person()
	if _, err := p.AddTab("Members", 10, 5); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"ID", "Name", "Tier", "N1", adoptedName, "gold"} {
		if err := p.Type("Members", a1.CellLabel(i/3, i%3), text); err != nil {
			t.Fatal(err)
		}
	}
	s, err := hikoutei.Open(context.Background(), dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true},
		hikoutei.Entity[member]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		u := s.Begin()
		if err := u.Persist(&member{ID: "M" + string(rune('0'+i)), Name: memberName(i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	hikouteitest.New(t, s) // provisions the store's own tabs
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, sheet
}

// storeFilesHold reports the files of dir (recursively) holding text.
func storeFilesHold(t *testing.T, dir, text string) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(text)) {
			hits = append(hits, filepath.Base(path))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// TestAdoptCLIRefusesAnEntityWithPersonalFields: `hikoutei adopt` (which
// opens the store without Go types) refuses to adopt a tab into an entity
// with personal fields, whether it holds sealed values already or none
// yet (the key file records which fields are personal), with
// adopt_map_invalid: no row reaches the log in clear. Its dry run says so.
func TestAdoptCLIRefusesAnEntityWithPersonalFields(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 2} {
		dir, sheet := memberSheetStore(t, n)
		args := []string{"adopt", "--dir", dir, "--sheets-endpoint", sheet.URL, "--spreadsheet", hikouteitest.SpreadsheetID,
			"--tab", "Members", "--entity", "Member"}
		code, out, errOut := runSplit(append(args, "--dry-run")...)
		if code != exitFailure || !strings.Contains(errOut, "adopt_map_invalid") {
			t.Errorf("%d members: adopt --dry-run exit %d, want 1 with adopt_map_invalid:\n%s%s", n, code, out, errOut)
		}
		code, out, errOut = runSplit(args...)
		if code != exitFailure || !strings.Contains(errOut, "adopt_map_invalid") || !strings.Contains(errOut, "personal") {
			t.Errorf("%d members: adopt exit %d, want 1 with adopt_map_invalid:\n%s%s", n, code, out, errOut)
		}
		if _, hist, _ := runSplit("audit", "--dir", dir, "--entity", "Member", "--id", "N1"); hist != "" {
			t.Errorf("%d members: the refused adoption committed N1:\n%s", n, hist)
		}
		if hits := storeFilesHold(t, dir, adoptedName); len(hits) > 0 {
			t.Errorf("%d members: the adopted name is in clear in %v", n, hits)
		}
		if strings.Contains(out+errOut, adoptedName) {
			t.Errorf("%d members: the output names the personal value:\n%s%s", n, out, errOut)
		}
	}
}

// TestAuditShowsNoSealedTextOfSyncedRecords: the effects that carry a
// record's values to the sheet (effect.queued) show its personal values
// as the entity.persisted events do: a marker, or opened on request.
func TestAuditShowsNoSealedTextOfSyncedRecords(t *testing.T) {
	t.Parallel()
	dir, _ := memberSheetStore(t, 2)
	code, out, errOut := runSplit("audit", "--dir", dir, "--entity", "Member", "--id", "M1")
	if code != exitOK || !strings.Contains(out, string(events.TypeEffectQueued)) || strings.Count(out, personalMarker) < 2 {
		t.Fatalf("audit: exit %d, want the record and its effect with %s:\n%s%s", code, personalMarker, out, errOut)
	}
	noPersonalText(t, "audit of a synced record", out, 1, 2)
	code, out, errOut = runSplit("audit", "--dir", dir, "--entity", "Member", "--id", "M1", "--reveal-personal")
	if code != exitOK || strings.Count(out, memberName(1)) < 2 || strings.Contains(out, "hk1e:") {
		t.Fatalf("audit --reveal-personal: exit %d, want the name in the record and its effect:\n%s%s", code, out, errOut)
	}
}
