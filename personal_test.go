package hikoutei

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// Person has personal fields; its primary key names the data subject.
type Person struct {
	ID    string  `hikoutei:"id,pk"`
	Name  string  `hikoutei:"name,personal"`
	Email *string `hikoutei:"email,personal"`
	City  string  `hikoutei:"city"`
}

// Order names its data subject in a field.
type Order struct {
	ID       string `hikoutei:"id,pk"`
	Customer string `hikoutei:"customer,subject"`
	Address  string `hikoutei:"address,personal"`
	Total    int64  `hikoutei:"total"`
}

// Distinctive plaintexts: a byte search for them cannot match by chance.
const (
	aliceName  = "Zelda-Quixotic-Alice-7d1f"
	aliceEmail = "alice.quixotic.7d1f@example.invalid"
	aliceAddr  = "42 Quixotic Lane 7d1f"
	bobName    = "Bartholomew-Bob-0c9e"
)

func ptr[T any](v T) *T { return &v }

func openPeople(t testing.TB, dir string, opts ...func(*Options)) *Store {
	t.Helper()
	o := Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true}
	for _, f := range opts {
		f(&o)
	}
	s, err := Open(t.Context(), dir, o, Entity[Person]("Person"), Entity[Order]("Order"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPersonalDeclaration(t *testing.T) {
	type BadKey struct {
		Email string `hikoutei:"email,pk,personal"`
	}
	_, err := Open(t.Context(), t.TempDir(), Options{NoAdmin: true}, Entity[BadKey]("BadKey"))
	if !errors.Is(err, ErrPersonalPrimaryKey) || !errors.Is(err, ErrInvalidEntity) {
		t.Fatalf("a personal primary key: %v", err)
	}
	type BadKind struct {
		ID  string `hikoutei:"id,pk"`
		Age int64  `hikoutei:"age,personal"`
	}
	type BadUser struct {
		ID    string `hikoutei:"id,pk"`
		Email string `hikoutei:"email,personal,user"`
	}
	type TwoSubjects struct {
		ID string `hikoutei:"id,pk"`
		A  string `hikoutei:"a,subject"`
		B  string `hikoutei:"b,subject"`
	}
	for _, d := range []EntityDef{Entity[BadKind]("BadKind"), Entity[BadUser]("BadUser"), Entity[TwoSubjects]("TwoSubjects")} {
		if _, err := Open(t.Context(), t.TempDir(), Options{NoAdmin: true}, d); !errors.Is(err, ErrInvalidEntity) {
			t.Errorf("%s: %v", d.Name(), err)
		}
	}
}

func TestPersonalSealedAtRest(t *testing.T) {
	dir := t.TempDir()
	s := openPeople(t, dir)
	commit(t, s, &Person{ID: "p-alice", Name: aliceName, Email: ptr(aliceEmail), City: "Lyon"})
	got, err := Get[Person](ctx, s, "p-alice")
	if err != nil || got.Name != aliceName || *got.Email != aliceEmail || got.City != "Lyon" {
		t.Fatalf("Get: %+v %v", got, err)
	}
	// Unchanged: sealing is deterministic, so persisting it again commits nothing.
	if res := commit(t, s, got); res.Events != 0 {
		t.Fatalf("an unchanged record committed %d events", res.Events)
	}
	if _, err := Find[Person](ctx, s, Where("name", aliceName)); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("a filter on a personal field: %v", err)
	}
	if _, err := Find[Person](ctx, s, OrderBy("email")); !errors.Is(err, ErrInvalidQuery) {
		t.Fatalf("an order by a personal field: %v", err)
	}
	mustT(t, s.Close())
	if hits := plaintextIn(t, dir, aliceName, aliceEmail); len(hits) > 0 {
		t.Fatalf("plaintext personal values in the store's files: %v", hits)
	}
}

// TestI37_EraseLeavesNoReadablePersonalValue: after Erase returns, no file
// of the store (log.db, read.sqlite and its WAL, snapshots, segments,
// keys.db) and no backup taken before the erasure holds the subject's
// personal values in clear, no reader can open them, and the chain still
// verifies.
func TestI37_EraseLeavesNoReadablePersonalValue(t *testing.T) {
	dir := t.TempDir()
	s := openPeople(t, dir, func(o *Options) { o.SnapshotEvery = 2 })
	commit(t, s, &Person{ID: "p-alice", Name: aliceName, Email: ptr(aliceEmail), City: "Lyon"})
	commit(t, s, &Person{ID: "p-bob", Name: bobName, City: "Oslo"})
	commit(t, s, &Order{ID: "o-1", Customer: "p-alice", Address: aliceAddr, Total: 12})
	first := commit(t, s, &Person{ID: "p-alice", Name: aliceName, Email: ptr(aliceEmail), City: "Nice"})
	if _, err := s.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Seal(ctx, SealOptions{Keep: 2, MinBatch: 1}); err != nil {
		t.Fatal(err)
	}
	backup := filepath.Join(t.TempDir(), "before.backup")
	if _, err := s.Backup(ctx, backup, false); err != nil {
		t.Fatal(err)
	}
	er, err := s.Erase(ctx, "p-alice")
	if err != nil {
		t.Fatal(err)
	}
	if er.Generation != 1 || er.Seq == 0 || len(er.Subject) != 32 {
		t.Fatalf("erasure: %+v", er)
	}
	assertErased(t, s, first.LastSeq)
	if _, err := s.Verify(ctx, VerifyOptions{}); err != nil {
		t.Fatalf("the chain no longer verifies after an erasure: %v", err)
	}
	if h := s.Health(); h.Keys != nil {
		t.Fatalf("Health().Keys after an erasure: %v", h.Keys)
	}
	mustT(t, s.Close())

	for _, sub := range []string{"snapshots", "segments"} { // the scan below reaches them
		if ents, err := os.ReadDir(filepath.Join(dir, sub)); err != nil || len(ents) == 0 {
			t.Fatalf("%s: %d entries, %v", sub, len(ents), err)
		}
	}
	for _, where := range []string{dir, backup, backup + ".segments"} {
		if hits := plaintextIn(t, where, aliceName, aliceEmail, aliceAddr); len(hits) > 0 {
			t.Fatalf("plaintext of the erased subject in %s: %v", where, hits)
		}
	}
	if hits := plaintextIn(t, dir, bobName); len(hits) > 0 {
		t.Fatalf("plaintext of another subject at rest: %v", hits)
	}

	// A view of the closed store (AsOfDir, what `hikoutei audit --at` reads) opens keys.db read-only.
	v, err := AsOfDir(ctx, dir, AtSeq(first.LastSeq), Entity[Person]("Person"), Entity[Order]("Order"))
	if err != nil {
		t.Fatal(err)
	}
	if a, err := Get[Person](ctx, v, "p-alice"); err != nil || a.Name != Erased {
		t.Fatalf("AsOfDir: %+v %v", a, err)
	}
	if b, err := Get[Person](ctx, v, "p-bob"); err != nil || b.Name != bobName {
		t.Fatalf("AsOfDir, another subject: %+v %v", b, err)
	}
	mustT(t, v.Close())

	// The erasure holds after reopening and after a rebuild of the read model.
	s = openPeople(t, dir)
	assertErased(t, s, first.LastSeq)
	mustT(t, s.Close())
	if _, _, err := RebuildReadModel(ctx, dir, ReplayOptions{}, Entity[Person]("Person"), Entity[Order]("Order")); err != nil {
		t.Fatal(err)
	}
	s = openPeople(t, dir)
	defer s.Close()
	assertErased(t, s, first.LastSeq)
}

// assertErased checks every reader of the store: typed reads, a view of a
// point before the erasure, and the events.
func assertErased(t *testing.T, s *Store, before uint64) {
	t.Helper()
	a, err := Get[Person](ctx, s, "p-alice")
	if err != nil || a.Name != Erased || a.Email == nil || *a.Email != Erased || a.City != "Nice" {
		t.Fatalf("Get after Erase: %+v %v", a, err)
	}
	if b, err := Get[Person](ctx, s, "p-bob"); err != nil || b.Name != bobName {
		t.Fatalf("another subject: %+v %v", b, err)
	}
	if o, err := Get[Order](ctx, s, "o-1"); err != nil || o.Address != Erased || o.Total != 12 {
		t.Fatalf("a record whose subject field names the subject: %+v %v", o, err)
	}
	v, err := s.AsOf(ctx, AtSeq(before))
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	if old, err := Get[Person](ctx, v, "p-alice"); err != nil || old.Name != Erased {
		t.Fatalf("AsOf before the erasure: %+v %v", old, err)
	}
	rec, err := v.Record(ctx, "Person", "p-alice")
	if err != nil || rec["name"] != (ErasedValue{}) {
		t.Fatalf("View.Record: %v %v", rec, err)
	}
	if b, err := json.Marshal(rec); err != nil || !bytes.Contains(b, []byte(`"name":"`+Erased+`"`)) {
		t.Fatalf("the marker in JSON: %s %v", b, err)
	}
	erasedSeen, erasures := 0, 0
	for ev, err := range s.Events(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		switch p := ev.Payload.(type) {
		case events.EntityPersisted:
			if p.ID == "p-bob" && p.Fields["name"] != bobName {
				t.Fatalf("bob's event: %v", p.Fields)
			}
			for _, f := range []string{"name", "email", "address"} {
				if v, ok := p.Fields[f]; ok && p.ID != "p-bob" {
					if _, marker := v.(ErasedValue); !marker {
						t.Fatalf("seq %d %s.%s = %v, want ErasedValue", ev.Seq, p.Entity, f, v)
					}
					erasedSeen++
				}
			}
		case events.SubjectErased:
			erasures++
		}
	}
	if erasedSeen != 3 || erasures != 1 { // alice's name and email, her order's address
		t.Fatalf("events: %d erased values, %d erasures", erasedSeen, erasures)
	}
}

// plaintextIn lists the files under root (a file or a folder; a missing
// one is skipped) holding any of the needles.
func plaintextIn(t *testing.T, root string, needles ...string) []string {
	t.Helper()
	var hits []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if bytes.Contains(raw, []byte(n)) {
				hits = append(hits, filepath.Base(path)+": "+n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

func TestPersonalKeysLostReported(t *testing.T) {
	dir := t.TempDir()
	s := openPeople(t, dir)
	commit(t, s, &Person{ID: "p-alice", Name: aliceName, City: "Lyon"})
	mustT(t, s.Close())
	mustT(t, os.Remove(filepath.Join(dir, keyring.File)))
	s = openPeople(t, dir)
	defer s.Close()
	if h := s.Health(); !errors.Is(h.Keys, ErrPersonalKeysLost) {
		t.Fatalf("Health().Keys with keys.db gone: %v", h.Keys)
	}
	if _, err := Get[Person](ctx, s, "p-alice"); !errors.Is(err, ErrPersonalKeysLost) {
		t.Fatalf("Get with keys.db gone: %v", err)
	}
	for _, err := range s.Events(ctx, 0) {
		if err != nil {
			if !errors.Is(err, ErrPersonalKeysLost) {
				t.Fatalf("Events: %v", err)
			}
			return
		}
	}
	t.Fatal("Events read a sealed value without its key")
}

// A store made by this build before a field was personal opens with the
// field now personal: old values stay as written (in clear: erasure
// cannot reach them), new ones are sealed.
func TestPersonalFieldAddedToAnOldStore(t *testing.T) {
	type PersonV1 struct {
		ID    string  `hikoutei:"id,pk"`
		Name  string  `hikoutei:"name"`
		Email *string `hikoutei:"email"`
		City  string  `hikoutei:"city"`
	}
	dir := t.TempDir()
	o := Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true}
	s, err := Open(t.Context(), dir, o, Entity[PersonV1]("Person"))
	if err != nil {
		t.Fatal(err)
	}
	commit(t, s, &PersonV1{ID: "p-old", Name: "Old Name", City: "Lyon"})
	mustT(t, s.Close())
	if _, err := os.Stat(filepath.Join(dir, keyring.File)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a store without personal fields got a key file: %v", err)
	}
	s = openPeople(t, dir)
	defer s.Close()
	if p, err := Get[Person](ctx, s, "p-old"); err != nil || p.Name != "Old Name" {
		t.Fatalf("old value: %+v %v", p, err)
	}
	commit(t, s, &Person{ID: "p-new", Name: aliceName, City: "Oslo"})
	if p, err := Get[Person](ctx, s, "p-new"); err != nil || p.Name != aliceName {
		t.Fatalf("new value: %+v %v", p, err)
	}
	if h := s.Health(); h.Keys != nil {
		t.Fatalf("Health().Keys: %v", h.Keys)
	}
}

// A subject who gets personal values again after an erasure gets a new
// key; the erased values stay erased.
func TestEraseThenReturn(t *testing.T) {
	s := openPeople(t, t.TempDir())
	defer s.Close()
	commit(t, s, &Person{ID: "p-alice", Name: aliceName, City: "Lyon"})
	if _, err := s.Erase(ctx, "p-alice", ErasedBy(ActorCLI)); err != nil {
		t.Fatal(err)
	}
	p, err := Get[Person](ctx, s, "p-alice")
	if err != nil || p.Name != Erased {
		t.Fatalf("%+v %v", p, err)
	}
	p.City = "Nice" // the marker is persisted as the marker
	commit(t, s, p)
	if p, err = Get[Person](ctx, s, "p-alice"); err != nil || p.Name != Erased || p.City != "Nice" {
		t.Fatalf("%+v %v", p, err)
	}
	p.Name = "Alice Again"
	commit(t, s, p)
	if p, err = Get[Person](ctx, s, "p-alice"); err != nil || p.Name != "Alice Again" {
		t.Fatalf("%+v %v", p, err)
	}
	er, err := s.Erase(ctx, "p-alice")
	if err != nil || er.Generation != 2 {
		t.Fatalf("second erasure: %+v %v", er, err)
	}
	var actors []Actor
	for ev, err := range s.Events(ctx, 0) {
		mustT(t, err)
		if x, ok := ev.Payload.(events.SubjectErased); ok {
			actors = append(actors, x.Actor)
		}
	}
	if len(actors) != 2 || actors[0] != ActorCLI || actors[1] != ActorApplication {
		t.Fatalf("erasure actors: %v", actors)
	}
	if _, err := s.Erase(ctx, " "); !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("an empty subject: %v", err)
	}
}

// An erasure interrupted after its mark (a crash before the event or
// before the key's destruction) is finished by the next Open, recording
// the actor the mark names (a mark made by an earlier build names none:
// application).
func TestEraseInterruptedIsFinishedAtOpen(t *testing.T) {
	dir := t.TempDir()
	s := openPeople(t, dir)
	commit(t, s, &Person{ID: "p-alice", Name: aliceName, City: "Lyon"})
	commit(t, s, &Person{ID: "p-bob", Name: bobName, City: "Oslo"})
	ring := s.keys.ring.Load()
	mustT(t, ring.MarkPending(ring.Digest("p-alice"), "")) // as an earlier build marked it
	mustT(t, ring.MarkPending(ring.Digest("p-bob"), string(ActorCLI)))
	want := map[string]Actor{ring.Digest("p-alice").String(): ActorApplication, ring.Digest("p-bob").String(): ActorCLI}
	mustT(t, s.Close())
	s = openPeople(t, dir)
	defer s.Close()
	for _, id := range []string{"p-alice", "p-bob"} {
		if p, err := Get[Person](ctx, s, id); err != nil || p.Name != Erased {
			t.Fatalf("%s after the reopen: %+v %v", id, p, err)
		}
	}
	got := map[string]Actor{}
	for ev, err := range s.Events(ctx, 0) {
		mustT(t, err)
		if x, ok := ev.Payload.(events.SubjectErased); ok {
			got[x.Subject] = x.Actor
		}
	}
	if !maps.Equal(got, want) || len(s.keys.ring.Load().Pending()) != 0 {
		t.Fatalf("erasure events by subject %v, want %v; pending %v", got, want, s.keys.ring.Load().Pending())
	}
}

// TestI37_EraseThenFindWithWarmCiphers: Find opens every record's
// personal values with ciphers the key file keeps per subject (issue 33);
// after Erase the erased subject's values read as the marker even though
// its cipher was warm, and another subject's still open.
func TestI37_EraseThenFindWithWarmCiphers(t *testing.T) {
	s := openPeople(t, t.TempDir())
	defer s.Close()
	commit(t, s, &Person{ID: "p-alice", Name: aliceName, Email: ptr(aliceEmail), City: "Lyon"})
	commit(t, s, &Person{ID: "p-bob", Name: bobName, City: "Oslo"})
	names := func() map[string]string {
		ps, err := Find[Person](ctx, s)
		mustT(t, err)
		out := map[string]string{}
		for _, p := range ps {
			out[p.ID] = p.Name
		}
		return out
	}
	for range 2 { // warm
		if got := names(); got["p-alice"] != aliceName || got["p-bob"] != bobName {
			t.Fatalf("before Erase: %v", got)
		}
	}
	if _, err := s.Erase(ctx, "p-alice"); err != nil {
		t.Fatal(err)
	}
	if got := names(); got["p-alice"] != Erased || got["p-bob"] != bobName {
		t.Fatalf("Find after Erase with warm ciphers: %v", got)
	}
}
