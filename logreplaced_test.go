package hikoutei

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// F1: Store.Backup refuses a target inside another store's directory
// (its log.db, forced or not, or a new file there), so no backup can
// replace a running store's log; and a running store whose log.db is
// replaced anyway (a rename over it) notices within one heartbeat:
// Health().Local is log_file_replaced and every commit is refused, so no
// commit is acknowledged into a file that is gone at close.
func TestF1_RunningStoreRefusesCommitsOnceItsLogFileIsReplaced(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	sa, err := Open(t.Context(), a, Options{HeartbeatInterval: -1, NoAdmin: true}, Entity[Airport]("Airport"))
	mustT(t, err)
	defer sa.Close()
	sb, err := Open(t.Context(), b, Options{HeartbeatInterval: 50 * time.Millisecond, NoAdmin: true}, Entity[Airport]("Airport"))
	mustT(t, err)
	defer sb.Close()
	commit := func(s *Store, id string) error {
		u := s.Begin()
		mustT(t, u.Persist(&Airport{ID: id, Name: id}))
		_, err := u.Commit(t.Context())
		return err
	}
	mustT(t, commit(sa, "LAX"))
	mustT(t, commit(sb, "NRT"))
	for _, force := range []bool{false, true} {
		for _, out := range []string{filepath.Join(b, "log.db"), filepath.Join(b, "x.db"), filepath.Join(b, "snapshots", "x.db")} {
			if _, err := sa.Backup(t.Context(), out, force); !errors.Is(err, ErrBackupTarget) || !errors.Is(err, ErrTargetInsideStore) {
				t.Fatalf("backup to %s (force %v): %v, want backup_target_invalid: target_inside_store", out, force, err)
			}
		}
	}
	mustT(t, commit(sb, "CDG"))

	// What a forced backup did before: A's copy renamed over B's log.
	copyOfA := filepath.Join(t.TempDir(), "a.db")
	_, err = sa.Backup(t.Context(), copyOfA, false)
	mustT(t, err)
	mustT(t, os.Rename(copyOfA, filepath.Join(b, "log.db")))
	deadline := time.Now().Add(5 * time.Second)
	for !errors.Is(sb.Health().Local, ErrLogFileReplaced) {
		if time.Now().After(deadline) {
			t.Fatalf("Health().Local = %v after 5 s, want log_file_replaced", sb.Health().Local)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code := ErrorCode(sb.Health().Local); code != "log_file_replaced" {
		t.Fatalf("code %q", code)
	}
	if err := commit(sb, "SFO"); !errors.Is(err, ErrLogFileReplaced) {
		t.Fatalf("commit after the replacement: %v, want log_file_replaced", err)
	}
}
