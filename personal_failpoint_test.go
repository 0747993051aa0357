//go:build failpoints

package hikoutei

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
)

// TestI37_AnErasureStoppedAtEachStepIsFinishedAtOpen: an erasure that
// fails or stops after its event committed (before the key file's
// rewrite, or before its rename) leaves the key in place and the mark;
// the next Open finishes it, and the subject reads as erased.
func TestI37_AnErasureStoppedAtEachStepIsFinishedAtOpen(t *testing.T) {
	for _, spec := range []string{failpoint.EraseAfterEvent + "=eio", failpoint.KeyringBeforeRename + "=eio",
		failpoint.EraseAfterEvent + "=panic"} {
		t.Run(spec, func(t *testing.T) {
			dir := t.TempDir()
			s := openPeople(t, dir)
			commit(t, s, &Person{ID: "p-alice", Name: aliceName, City: "Lyon"})
			if err := eraseWith(s, spec); err == nil {
				t.Fatal("the erasure did not stop")
			}
			mustT(t, s.Close())
			if _, err := os.Stat(filepath.Join(dir, keyring.File+".rewrite")); !os.IsNotExist(err) {
				t.Fatalf("a rewrite left behind: %v", err)
			}
			s = openPeople(t, dir)
			defer s.Close()
			if p, err := Get[Person](ctx, s, "p-alice"); err != nil || p.Name != Erased {
				t.Fatalf("after the reopen: %+v %v", p, err)
			}
			n := 0
			for ev, err := range s.Events(ctx, 0) {
				mustT(t, err)
				if _, ok := ev.Payload.(events.SubjectErased); ok {
					n++
				}
			}
			if n != 2 || len(s.keys.ring.Load().Pending()) != 0 { // the stopped one's, and Open's
				t.Fatalf("%d erasure events, pending %v", n, s.keys.ring.Load().Pending())
			}
			if _, err := s.Verify(ctx, VerifyOptions{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// eraseWith erases p-alice with the failpoint spec armed; a panic is
// returned as an error.
func eraseWith(s *Store, spec string) (err error) {
	if err := failpoint.Enable(spec); err != nil {
		return nil
	}
	defer failpoint.Disable()
	defer func() {
		if r := recover(); r != nil {
			err = os.ErrInvalid
		}
	}()
	_, err = s.Erase(ctx, "p-alice")
	return err
}
