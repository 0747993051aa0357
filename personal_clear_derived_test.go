package hikoutei_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// memberV1 is member before its email was marked personal.
type memberV1 struct {
	ID    string `hikoutei:"id,pk"`
	Email string `hikoutei:"email"`
	Team  string `hikoutei:"team"`
	Note  string `hikoutei:"note,user"`
}

// storeBytesHold reports the read-model file (read.sqlite and its -wal,
// -shm, set-aside copies) holding b, "" when none does.
func storeBytesHold(t *testing.T, dir string, b []byte) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "read.sqlite*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no read model in %s: %v", dir, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(data, b) {
			return filepath.Base(f)
		}
	}
	return ""
}

// TestI37_DerivedStateOfValuesWrittenBeforeTheFieldWasPersonal: a value
// written while its field was not personal is in the log in clear. Once
// its subject is erased, the state the store derives and can rewrite
// shows the marker: no byte of read.sqlite (nor its WAL) holds the value,
// the System cell shows the marker (and a reconciliation keeps it), and a
// rebuild of the read model from the log masks it again.
func TestI37_DerivedStateOfValuesWrittenBeforeTheFieldWasPersonal(t *testing.T) {
	dir, sheet := t.TempDir(), hikouteitest.NewSheet(t)
	const other = "other.person.51ab@example.invalid"
	old, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{Sync: sheet.SyncOptions(), HeartbeatInterval: -1, NoAdmin: true},
		hikoutei.Entity[memberV1]("Member"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*memberV1{{ID: "m-1", Email: memberEmail, Team: "blue"}, {ID: "m-2", Email: other, Team: "red"}} {
		u := old.Begin()
		if err := u.Persist(m); err != nil {
			t.Fatal(err)
		}
		if _, err := u.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	hikouteitest.New(t, old).Drain(t.Context())
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	r := openMembers(t, dir, sheet)
	er, err := r.s.Erase(t.Context(), "m-1")
	if err != nil || er.InClear != 1 {
		t.Fatalf("Erase: %+v %v", er, err)
	}
	r.h.Drain(t.Context())
	if found, _ := r.cells(t, "after the erasure", hikoutei.Erased, memberEmail); found != 1 {
		t.Fatalf("after the erasure: %d cells show the marker, want 1", found)
	}
	if found, _ := r.cells(t, "after the erasure", other, ""); found != 1 {
		t.Fatal("another subject's cell lost its value")
	}
	if f := storeBytesHold(t, dir, []byte(memberEmail)); f != "" {
		t.Fatalf("after the erasure, %s holds the erased value in clear", f)
	}
	r.quiet(t, "after the erasure")
	got, err := hikoutei.Get[member](t.Context(), r.s, "m-1")
	if err != nil || got.Email != hikoutei.Erased || got.Team != "blue" {
		t.Fatalf("%+v %v", got, err)
	}
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hikoutei.RebuildReadModel(t.Context(), dir, hikoutei.ReplayOptions{}, hikoutei.Entity[member]("Member")); err != nil {
		t.Fatal(err)
	}
	if f := storeBytesHold(t, dir, []byte(memberEmail)); f != "" {
		t.Fatalf("after a rebuild, %s holds the erased value in clear", f)
	}
	if f := storeBytesHold(t, dir, []byte(other)); f == "" {
		t.Fatal("the rebuild lost another subject's value")
	}
	// A store opened without its read model rebuilds it before it opens
	// the key file: masked all the same.
	files, _ := filepath.Glob(filepath.Join(dir, "read.sqlite*"))
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	r = openMembers(t, dir, sheet)
	if got, err := hikoutei.Get[member](t.Context(), r.s, "m-1"); err != nil || got.Email != hikoutei.Erased {
		t.Fatalf("after Open rebuilt the read model: %+v %v", got, err)
	}
	if err := r.s.Close(); err != nil {
		t.Fatal(err)
	}
	if f := storeBytesHold(t, dir, []byte(memberEmail)); f != "" {
		t.Fatalf("after Open rebuilt the read model, %s holds the erased value in clear", f)
	}
}
