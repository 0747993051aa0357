package hikoutei

import (
	"context"
	"database/sql"
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

// A run stopped while it records its checkpoint (here by its own handler,
// so the write begins with the context already done) keeps the checkpoint
// and returns ctx's error alone: the write is not bound to ctx, so it
// neither fails with a bare SQL error nor loses the record. The
// transactional mode commits its open batch the same way.
func TestSubscriptionStoppedWhileRecordingItsCheckpointKeepsIt(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 3)
	last := head(t, s)
	runs := map[string]func(context.Context, context.CancelFunc) error{
		"callback": func(ctx context.Context, stop context.CancelFunc) error {
			return s.Subscribe(ctx, "callback", func(_ context.Context, ev Event) error {
				if ev.Seq == last {
					stop()
				}
				return nil
			}, CheckpointEvery(1))
		},
		"transactional": func(ctx context.Context, stop context.CancelFunc) error {
			return s.SubscribeTx(ctx, "transactional", func(_ context.Context, _ *sql.Tx, ev Event) error {
				if ev.Seq == last {
					stop()
				}
				return nil
			})
		},
	}
	for name, run := range runs {
		runCtx, stop := context.WithCancel(t.Context())
		err := run(runCtx, stop)
		stop()
		if err != context.Canceled { // ctx's error alone, nothing joined to it
			t.Fatalf("%s: Subscribe = %v, want context.Canceled alone", name, err)
		}
		if st := status(t, s, name); st.Checkpoint != last || st.Lag != 0 || st.Err != nil {
			t.Fatalf("%s: status %+v, want the checkpoint at %d", name, st, last)
		}
	}
}

// A checkpoint write the read model refuses is
// subscription_checkpoint_write_failed, not a bare SQL error, and loses
// nothing: the next run hands the same events again.
func TestSubscriptionCheckpointWriteFailureIsTypedAndLosesNothing(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	defer s.Close()
	commitAirports(t, s, 0, 3)
	refuse := `CREATE TRIGGER refuse_insert BEFORE INSERT ON hk_subscriptions BEGIN SELECT RAISE(ABORT, 'refused'); END;
CREATE TRIGGER refuse_update BEFORE UPDATE ON hk_subscriptions BEGIN SELECT RAISE(ABORT, 'refused'); END;`
	execReadModel(t, dir, refuse)
	var handed []uint64
	h := func(_ context.Context, ev Event) error { handed = append(handed, ev.Seq); return nil }
	err := s.Subscribe(t.Context(), "consumer", h, CheckpointEvery(1))
	if !errors.Is(err, ErrSubscriptionCheckpointWrite) || len(handed) != 1 {
		t.Fatalf("Subscribe = %v after %v, want subscription_checkpoint_write_failed after seq 1", err, handed)
	}
	execReadModel(t, dir, "DROP TRIGGER refuse_insert; DROP TRIGGER refuse_update;")
	last := head(t, s)
	handed = nil
	runCtx, stop := context.WithCancel(t.Context())
	defer stop()
	err = s.Subscribe(runCtx, "consumer", func(ctx context.Context, ev Event) error {
		if ev.Seq == last {
			stop()
		}
		return h(ctx, ev)
	})
	if !errors.Is(err, context.Canceled) || len(handed) != int(last) || handed[0] != 1 {
		t.Fatalf("next run = %v handing %v, want seq 1 to %d again", err, handed, last)
	}
}

// execReadModel runs script on the read model, as a consumer's own
// connection would.
func execReadModel(t *testing.T, dir, script string) {
	t.Helper()
	conn, err := sqlite.OpenConn(filepath.Join(dir, ReadModelFile), sqlite.OpenReadWrite)
	mustT(t, err)
	defer conn.Close()
	conn.SetBusyTimeout(10 * time.Second)
	mustT(t, sqlitex.ExecuteScript(conn, script, nil))
}
