package hikoutei

import (
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// A store whose key file was made by an earlier build (no record of the
// personal fields) opened with its Go types records them, so that an
// adoption without Go types (OpenDeclared, as hikoutei adopt opens it)
// into a personal entity with no records yet is refused: before, nothing
// told it the entity was personal.
func TestAdoptDeclaredRefusesPersonalEntityOfAnOldKeyFile(t *testing.T) {
	dir := t.TempDir()
	if err := openPeople(t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(filepath.Join(dir, keyring.File), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte("personal")) }), db.Close()); err != nil {
		t.Fatal(err) // as an earlier build made it
	}
	adopt := func() error {
		s, err := OpenDeclared(t.Context(), dir, Options{HeartbeatInterval: -1, NoAdmin: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Adopt(t.Context(), AdoptOptions{Tab: "People", Entity: "Person"})
		return err
	}
	if err := adopt(); errors.Is(err, ErrAdoptMapInvalid) {
		t.Fatalf("an old key file records no personal field, yet: %v", err)
	}
	if err := openPeople(t, dir).Close(); err != nil {
		t.Fatal(err)
	}
	if err := adopt(); !errors.Is(err, ErrAdoptMapInvalid) {
		t.Fatalf("adopting into Person without Go types after a typed Open: %v, want adopt_map_invalid", err)
	}
}
