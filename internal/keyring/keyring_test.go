package keyring

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestSealOpenErase(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	r, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d := r.Digest("alice")
	if _, err := r.Ensure([]Digest{d}); err != nil {
		t.Fatal(err)
	}
	s1, err := r.Seal("Person", "email", d, "alice@example.org")
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := r.Seal("Person", "email", d, "alice@example.org")
	if s1 != s2 || !IsSealed(s1) {
		t.Fatalf("sealing is not deterministic: %q %q", s1, s2)
	}
	if got, st, err := r.Open("Person", "email", s1); err != nil || st != Opened || got != "alice@example.org" {
		t.Fatalf("open: %q %v %v", got, st, err)
	}
	if _, _, err := r.Open("Person", "phone", s1); !errors.Is(err, ErrSealedValueMalformed) {
		t.Fatalf("a value moved to another field opened: %v", err)
	}
	key := r.keys[d].key
	if err := r.MarkPending(d, "cli"); err != nil {
		t.Fatal(err)
	}
	if err := r.Destroy(d); err != nil {
		t.Fatal(err)
	}
	if _, st, err := r.Open("Person", "email", s1); err != nil || st != Erased {
		t.Fatalf("after Destroy: %v %v", st, err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, key[:]) {
		t.Fatal("the key file still holds the destroyed key")
	}
	if len(r.Pending()) != 0 {
		t.Fatal("pending mark kept")
	}
	// A new key for the same subject is of the next generation.
	if _, err := r.Ensure([]Digest{d}); err != nil || r.Generation(d) != 2 {
		t.Fatalf("new generation: %d %v", r.Generation(d), err)
	}
	r.Close()
	again, err := Open(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if _, st, err := again.Open("Person", "email", s1); err != nil || st != Erased {
		t.Fatalf("reopened: %v %v", st, err)
	}
}

func TestLostKeyFile(t *testing.T) {
	dir := t.TempDir()
	r, _ := Open(filepath.Join(dir, File), true)
	d := r.Digest("bob")
	_, _ = r.Ensure([]Digest{d})
	s, _ := r.Seal("Person", "email", d, "bob@example.org")
	r.Close()
	other, _ := Open(filepath.Join(dir, "other.db"), true)
	defer other.Close()
	if _, _, err := other.Open("Person", "email", s); !errors.Is(err, ErrKeysLost) {
		t.Fatalf("another key file: %v", err)
	}
	var none *Ring
	if _, _, err := none.Open("Person", "email", s); !errors.Is(err, ErrKeysLost) {
		t.Fatalf("no key file: %v", err)
	}
	if got, st, err := none.Open("Person", "email", "plain"); err != nil || st != Plain || got != "plain" {
		t.Fatalf("plain: %q %v %v", got, st, err)
	}
}

func FuzzOpen(f *testing.F) {
	f.Add("hk1e:AAAA")
	f.Add("plain")
	r, err := Open(filepath.Join(f.TempDir(), File), true)
	if err != nil {
		f.Fatal(err)
	}
	d := r.Digest("x")
	_, _ = r.Ensure([]Digest{d})
	s, _ := r.Seal("E", "f", d, "v")
	f.Add(s)
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = r.Open("E", "f", s) // never panics
		_, _ = SubjectOf(s)
	})
}

// The personal fields recorded survive a reopen, a read-only open and an
// erasure's rewrite; a key file made without the bucket (an earlier
// build) opens with nothing recorded and records them on request.
func TestPersonalFieldsRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), File)
	r, err := Open(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketPersonal) }); err != nil {
		t.Fatal(err) // as an earlier build made it
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err = Open(path, false); err != nil {
		t.Fatal(err)
	}
	if got := r.Personal("Member"); got != nil {
		t.Fatalf("an old key file records %v", got)
	}
	if err := r.SetPersonal(map[string][]string{"Member": {"name", "email"}, "Plain": nil}); err != nil {
		t.Fatal(err)
	}
	d := r.Digest("M1")
	_, err = r.Ensure([]Digest{d})
	if err := errors.Join(err, r.MarkPending(d, "cli"), r.Destroy(d), r.Close()); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if got := ro.Personal("Member"); !slices.Equal(got, []string{"email", "name"}) || ro.Personal("Plain") != nil {
		t.Fatalf("after a rewrite: Member %v, Plain %v", got, ro.Personal("Plain"))
	}
}
