package hikoutei

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// setSubscriptionCheckpoint writes a checkpoint into the closed store's
// read model, as a bit flip or an edit with sqlite3 would.
func setSubscriptionCheckpoint(t *testing.T, dir, name string, cp int64) {
	t.Helper()
	conn, err := sqlite.OpenConn(filepath.Join(dir, ReadModelFile), sqlite.OpenReadWrite)
	mustT(t, err)
	defer conn.Close()
	mustT(t, sqlitex.Execute(conn, "UPDATE hk_subscriptions SET checkpoint = ? WHERE name = ?", &sqlitex.ExecOptions{Args: []any{cp, name}}))
}

// F9: a subscription checkpoint past the log head (or negative) is an
// error, as the read model's own checkpoint past the head is: Subscribe
// refuses to run it (subscription_checkpoint_invalid) instead of skipping
// every event up to it, and Subscriptions reports it with no lag.
func TestF9_SubscriptionCheckpointPastTheHeadIsRefusedNotSkipped(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.Context(), dir, Options{HeartbeatInterval: -1, NoAdmin: true}, Entity[Airport]("Airport"))
	mustT(t, err)
	commitAirports(t, s, 0, 3)
	ch, stop := runSub(s, "consumer", CheckpointEvery(1))
	receive(t, ch, 1, head(t, s))
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	mustT(t, s.Close())

	for _, bad := range []int64{5000, -7} {
		setSubscriptionCheckpoint(t, dir, "consumer", bad)
		s, err := Open(t.Context(), dir, Options{HeartbeatInterval: -1, NoAdmin: true}, Entity[Airport]("Airport"))
		mustT(t, err)
		commitAirports(t, s, 10, 3)
		st := status(t, s, "consumer")
		if !errors.Is(st.Err, ErrSubscriptionCheckpoint) || st.Lag != 0 {
			t.Fatalf("checkpoint %d: status %+v, want subscription_checkpoint_invalid", bad, st)
		}
		delivered := 0
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		err = s.Subscribe(ctx, "consumer", func(context.Context, Event) error { delivered++; return nil })
		cancel()
		var ce *SubscriptionCheckpointError
		if !errors.Is(err, ErrSubscriptionCheckpoint) || !errors.As(err, &ce) || ce.Checkpoint != bad || delivered != 0 {
			t.Fatalf("checkpoint %d: Subscribe = %v after %d events, want subscription_checkpoint_invalid at once", bad, err, delivered)
		}
		mustT(t, s.Close())
	}
}
