package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/echo"
)

type schemaRecV1 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

type schemaRecV2 struct {
	ID    string `hikoutei:"id,pk"`
	Title string `hikoutei:"title,was=name"`
	Notes string `hikoutei:"notes,user"`
}

// schemaStore is a closed store with Rec a: Alpha, b: Bravo, reopened
// once with name renamed title.
func schemaStore(t *testing.T) string {
	t.Helper()
	ctx, dir := context.Background(), t.TempDir()
	opts := hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(ctx, dir, opts, hikoutei.Entity[schemaRecV1]("Rec"))
	if err != nil {
		t.Fatal(err)
	}
	u := s.Begin()
	u.Persist(&schemaRecV1{ID: "a", Name: "Alpha"})
	u.Persist(&schemaRecV1{ID: "b", Name: "Bravo"})
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = hikoutei.Open(ctx, dir, opts, hikoutei.Entity[schemaRecV2]("Rec")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return dir
}

func TestI35_SchemaShowsTheRecordedShapesAndTheirHistory(t *testing.T) {
	dir := schemaStore(t)
	code, out, errOut := runSplit("schema", "--dir", dir)
	if code != exitOK || !strings.Contains(out, "title") || !strings.Contains(out, "Rec.title field_renamed name → title") || !strings.Contains(out, "compatible") {
		t.Fatalf("schema: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runSplit("schema", "--dir", dir, "--json")
	var s schemaJSON
	if err := json.Unmarshal([]byte(out), &s); code != exitOK || err != nil || len(s.History) != 2 || s.History[0].Classified ||
		!s.History[1].Classified || s.History[1].Changes[0].Kind != "field_renamed" || s.Entities[0].Fields[0].Name != "title" {
		t.Fatalf("schema --json: exit %d %v\n%s", code, err, out)
	}
}

func TestI35_MigrateDryRunClassifiesAndNamesTheRefusedRecords(t *testing.T) {
	t.Parallel()
	dir := schemaStore(t)
	_, out, _ := runSplit("schema", "--dir", dir, "--json")
	var s schemaJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatal(err)
	}
	s.History = nil
	s.Entities[0].Fields = []fieldJSON{{Name: "title", Kind: "float", Owner: "system"}, // title: text → float
		{Name: "label", Kind: "string", Owner: "user", Was: []string{"notes"}}} // notes renamed label
	file := filepath.Join(t.TempDir(), "shapes.json")
	b, _ := json.Marshal(s)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadDir(dir)
	code, out, errOut := runSplit("migrate", "--dir", dir, "--dry-run", "--shapes", file)
	if code != exitFailure || !strings.Contains(out, "Rec.title field_retyped string → float") || !strings.Contains(out, "2 record(s) (a, b)") ||
		!strings.Contains(out, "Rec.label field_renamed notes → label") {
		t.Fatalf("migrate --dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if strings.Contains(out, "Alpha") {
		t.Errorf("the plan shows a value:\n%s", out)
	}
	code, out, _ = runSplit("migrate", "--dir", dir, "--dry-run", "--shapes", file, "--json")
	var p planJSON
	if err := json.Unmarshal([]byte(out), &p); code != exitFailure || err != nil || len(p.Refused) != 1 || *p.Refused[0].Records != 2 {
		t.Fatalf("migrate --json: exit %d %v\n%s", code, err, out)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("the dry run changed the store directory: %d → %d files", len(before), len(after))
	}
	migrate := findCommand(t, []string{"migrate"})
	wantUsage(t, migrate, []string{"migrate", "--dir", dir, "--shapes", file})
	wantUsage(t, migrate, []string{"migrate", "--dir", dir, "--dry-run"})
	os.WriteFile(file, []byte(`{"entities": [{"name": "Rec", "bogus": 1}]}`), 0o600)
	wantUsage(t, migrate, []string{"migrate", "--dir", dir, "--dry-run", "--shapes", file})
}

// audit --at reads a record's state before a rename under the new name.
func TestI35_AuditAtBeforeARenameShowsTheNewName(t *testing.T) {
	dir := schemaStore(t)
	code, out, errOut := runSplit("audit", "--dir", dir, "--entity", "Rec", "--id", "a", "--at", "4", "--json")
	first, _, _ := strings.Cut(out, "\n")
	var st struct {
		State map[string]any `json:"state"`
	}
	if err := json.Unmarshal([]byte(first), &st); code != exitOK || err != nil || st.State["title"] != "Alpha" || st.State["name"] != nil {
		t.Fatalf("audit --at: exit %d %v\n%s%s", code, err, out, errOut)
	}
}

// A shapes file that declares no entity (empty, null, {}, no entities) is
// malformed: it is a usage error, never "no change".
func TestMigrateDryRunRefusesAShapesFileWithoutEntities(t *testing.T) {
	dir := schemaStore(t)
	migrate := findCommand(t, []string{"migrate"})
	file := filepath.Join(t.TempDir(), "shapes.json")
	for _, body := range []string{`null`, `{}`, `{"entities": []}`, `{"entities": null}`} {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, out, _ := runSplit("migrate", "--dir", dir, "--dry-run", "--shapes", file); code == exitOK || strings.Contains(out, "no change") {
			t.Fatalf("%s: exit %d\n%s", body, code, out)
		}
		wantUsage(t, migrate, []string{"migrate", "--dir", dir, "--dry-run", "--shapes", file})
	}
}

// TestMigrateDryRunEchoesHostileNamesBounded: an entity name or a kind in
// a shapes file that is refused is echoed at most echo.MaxRunes
// characters long with its control characters escaped.
func TestMigrateDryRunEchoesHostileNamesBounded(t *testing.T) {
	dir := schemaStore(t)
	hostile := "\x1b[2J\u202e" + strings.Repeat("N", 3000)
	file := filepath.Join(t.TempDir(), "shapes.json")
	for _, s := range []schemaJSON{
		{Entities: []shapeJSON{{Name: hostile, PK: "id"}}},
		{Entities: []shapeJSON{{Name: "Rec", PK: "id", Fields: []fieldJSON{{Name: "name", Kind: hostile, Owner: "system"}}}}},
		{Entities: []shapeJSON{{Name: "Rec", PK: "id", Fields: []fieldJSON{{Name: "name", Kind: "string", Owner: hostile}}}}},
	} {
		b, _ := json.Marshal(s)
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runSplit("migrate", "--dir", dir, "--dry-run", "--shapes", file)
		if code == exitOK || !strings.Contains(errOut, echo.Ellipsis) || strings.ContainsAny(errOut, "\x1b\u202e") ||
			strings.Contains(errOut, strings.Repeat("N", echo.MaxRunes)) {
			t.Fatalf("exit %d\n%s%q", code, out, errOut)
		}
	}
}

// TestMigrateDryRunOwnerDefaultsToSystem: a field of a shapes file that
// says no owner is the application's (system), as a tag without ",user":
// the same shapes without owners classify as with them.
func TestMigrateDryRunOwnerDefaultsToSystem(t *testing.T) {
	t.Parallel()
	dir := schemaStore(t)
	file := filepath.Join(t.TempDir(), "shapes.json")
	plan := func(body string) planJSON {
		t.Helper()
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := runSplit("migrate", "--dir", dir, "--dry-run", "--shapes", file, "--json")
		var p planJSON
		if err := json.Unmarshal([]byte(out), &p); code != exitOK || err != nil {
			t.Fatalf("%s: exit %d %v\n%s%s", body, code, err, out, errOut)
		}
		return p
	}
	without := plan(`{"entities":[{"name":"Rec","pk":"id","fields":[{"name":"title","kind":"string"},{"name":"notes","kind":"string","owner":"user"},{"name":"extra","kind":"int"}]}]}`)
	with := plan(`{"entities":[{"name":"Rec","pk":"id","fields":[{"name":"title","kind":"string","owner":"system"},{"name":"notes","kind":"string","owner":"user"},{"name":"extra","kind":"int","owner":"system"}]}]}`)
	if len(without.Changes) != 1 || without.Changes[0].Kind != "field_added" || !reflect.DeepEqual(without, with) {
		t.Fatalf("without owners: %+v\nwith owners: %+v", without, with)
	}
}
