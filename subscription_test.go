package hikoutei

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// airport returns a distinct airport for subscription tests.
func airport(i int) *Airport {
	return &Airport{ID: fmt.Sprintf("S%05d", i), Name: fmt.Sprintf("Airport %d", i)}
}

// commitAirports commits n airports, one a commit, from number first.
func commitAirports(t testing.TB, s *Store, first, n int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		commit(t, s, airport(i))
	}
}

func head(t testing.TB, s *Store) uint64 {
	t.Helper()
	h, err := s.e.Log().Head()
	mustT(t, err)
	return h
}

// runSub runs Subscribe on a goroutine, handing each event's seq to the
// returned channel; stop cancels it and returns Subscribe's error.
func runSub(s *Store, name string, opts ...SubscribeOption) (<-chan Event, func() error) {
	ch, errc := make(chan Event), make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		errc <- s.Subscribe(ctx, name, func(ctx context.Context, ev Event) error {
			select {
			case ch <- ev:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}, opts...)
	}()
	return ch, func() error { cancel(); return <-errc }
}

func receive(t *testing.T, ch <-chan Event, from, to uint64) {
	t.Helper()
	for want := from; want <= to; want++ {
		if ev := <-ch; ev.Seq != want {
			t.Fatalf("received seq %d, want %d", ev.Seq, want)
		}
	}
}

func status(t testing.TB, s *Store, name string) SubscriptionStatus {
	t.Helper()
	all, err := s.Subscriptions(ctx)
	mustT(t, err)
	for _, st := range all {
		if st.Name == name {
			return st
		}
	}
	t.Fatalf("no subscription %q in %+v", name, all)
	return SubscriptionStatus{}
}

// TestI34_CatchUpThenLiveInLogOrder: a subscription first delivers the
// events already in the log, then each later commit as it lands (woken by
// the commit, not a timer), every seq once in order; stopping it records
// the checkpoint at the last event, with no lag.
func TestI34_CatchUpThenLiveInLogOrder(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 30)
	caught := head(t, s)
	ch, stop := runSub(s, "audit", CheckpointEvery(7))
	receive(t, ch, 1, caught)
	commitAirports(t, s, 30, 5)
	receive(t, ch, caught+1, head(t, s))
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Subscribe after cancel: %v", err)
	}
	if st := status(t, s, "audit"); st.Checkpoint != head(t, s) || st.Lag != 0 || st.Mode != "callback" || st.Running {
		t.Fatalf("status %+v, want checkpoint %d, lag 0, callback, stopped", st, head(t, s))
	}
}

// TestI34_ResumesAfterTheCheckpointAcrossReopen: a subscription stopped
// and the store reopened resumes at the event after its checkpoint.
func TestI34_ResumesAfterTheCheckpointAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	commitAirports(t, s, 0, 10)
	ch, stop := runSub(s, "audit")
	receive(t, ch, 1, head(t, s))
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	cp := status(t, s, "audit").Checkpoint
	mustT(t, s.Close())
	s = openStore(t, dir)
	defer s.Close()
	if st := status(t, s, "audit"); st.Checkpoint != cp || st.Lag != head(t, s)-cp || st.Lag == 0 {
		t.Fatalf("after reopen %+v, want checkpoint %d and the lease events as lag", st, cp)
	}
	ch, stop = runSub(s, "audit")
	receive(t, ch, cp+1, head(t, s))
	mustT(t, ignoreCanceled(stop()))
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// TestI34_TwoNamedSubscriptionsAreIndependent: each name has its own
// checkpoint; one failing stops only itself, before the failing event,
// and resumes there.
func TestI34_TwoNamedSubscriptionsAreIndependent(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 20)
	h := head(t, s)
	failAt := h / 2
	boom := errors.New("boom")
	err := s.Subscribe(ctx, "first", func(_ context.Context, ev Event) error {
		if ev.Seq == failAt {
			return boom
		}
		return nil
	})
	var se *SubscriptionError
	if !errors.Is(err, ErrSubscriptionHandler) || !errors.Is(err, boom) || !errors.As(err, &se) || se.Seq != failAt {
		t.Fatalf("a failing handler: %v", err)
	}
	ch, stop := runSub(s, "second")
	receive(t, ch, 1, h)
	mustT(t, ignoreCanceled(stop()))
	if a, b := status(t, s, "first"), status(t, s, "second"); a.Checkpoint != failAt-1 || b.Checkpoint != h {
		t.Fatalf("first %+v (want checkpoint %d), second %+v (want %d)", a, failAt-1, b, h)
	}
	ch, stop = runSub(s, "first")
	receive(t, ch, failAt, h)
	mustT(t, ignoreCanceled(stop()))
}

// TestI34_APanickingHandlerStopsItsSubscriptionOnly: the panic is
// recovered into ErrSubscriptionPanic, the checkpoint stays before the
// event, and the store keeps working.
func TestI34_APanickingHandlerStopsItsSubscriptionOnly(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 5)
	err := s.Subscribe(ctx, "p", func(_ context.Context, ev Event) error {
		if ev.Seq == 3 {
			panic("handler bug")
		}
		return nil
	}, CheckpointEvery(1))
	var se *SubscriptionError
	if !errors.Is(err, ErrSubscriptionPanic) || !errors.As(err, &se) || se.Seq != 3 || se.Panic != "handler bug" {
		t.Fatalf("a panicking handler: %v", err)
	}
	if st := status(t, s, "p"); st.Checkpoint != 2 {
		t.Fatalf("checkpoint %d, want 2", st.Checkpoint)
	}
	commitAirports(t, s, 5, 1)
}

// TestI34_OneRunPerNameAndCloseEndsRuns: a second run of a name is
// refused while one runs; Close ends the runs with ErrStoreClosed.
func TestI34_OneRunPerNameAndCloseEndsRuns(t *testing.T) {
	s := openStore(t, t.TempDir())
	commitAirports(t, s, 0, 2)
	ch, stop := runSub(s, "once")
	receive(t, ch, 1, head(t, s)) // the run is registered
	if err := s.Subscribe(ctx, "once", func(context.Context, Event) error { return nil }); !errors.Is(err, ErrSubscriptionActive) {
		t.Fatalf("a second run: %v", err)
	}
	for _, bad := range []string{"", string(make([]byte, 201))} {
		if err := s.Subscribe(ctx, bad, func(context.Context, Event) error { return nil }); !errors.Is(err, ErrInvalidSubscription) {
			t.Fatalf("name %q: %v", bad, err)
		}
	}
	if err := s.Subscribe(ctx, "nil", nil); !errors.Is(err, ErrInvalidSubscription) {
		t.Fatalf("a nil handler: %v", err)
	}
	mustT(t, s.Close())
	if err := stop(); !errors.Is(err, ErrStoreClosed) {
		t.Fatalf("a run when the store closed: %v", err)
	}
}

// TestI34_TransactionalSubscriptionChangesStateExactlyOnce: a failing
// event rolls its whole batch back with the checkpoint, so after the
// rerun the consumer's table holds each event exactly once; the table
// survives a reopen (the store's schema check ignores it) and leaves the
// read model's digest equal to a rebuild's.
func TestI34_TransactionalSubscriptionChangesStateExactlyOnce(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	commitAirports(t, s, 0, 25)
	h := head(t, s)
	boom := errors.New("boom")
	ledger := func(failAt uint64) TxHandler {
		return func(ctx context.Context, tx *sql.Tx, ev Event) error {
			if _, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS app_ledger (seq INTEGER NOT NULL, type TEXT NOT NULL)"); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "INSERT INTO app_ledger VALUES (?, ?)", ev.Seq, string(ev.Type())); err != nil {
				return err
			}
			if ev.Seq == failAt {
				return boom
			}
			return nil
		}
	}
	failAt := uint64(13)
	if err := s.SubscribeTx(ctx, "ledger", ledger(failAt), TxBatch(5)); !errors.Is(err, boom) {
		t.Fatalf("failing transactional run: %v", err)
	}
	if st := status(t, s, "ledger"); st.Checkpoint != 10 || st.Mode != "transactional" {
		t.Fatalf("after a failure in the batch 11..15: %+v, want checkpoint 10", st)
	}
	mustT(t, s.Close())
	s = openStore(t, dir)
	defer s.Close()
	ctx2, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.SubscribeTx(ctx2, "ledger", ledger(0), TxBatch(5)) }()
	waitCheckpoint(t, s, "ledger", head(t, s))
	cancel()
	mustT(t, ignoreCanceled(<-done))
	seqs := ledgerSeqs(t, s)
	want := make([]uint64, head(t, s))
	for i := range want {
		want[i] = uint64(i + 1)
	}
	if !slices.Equal(seqs, want) || h >= head(t, s) {
		t.Fatalf("ledger holds %v, want 1..%d once each", seqs, head(t, s))
	}
	mustT(t, s.Close())
	if got, rebuilt := digest(t, s.ReadModelPath()), rebuildDigest(t, dir); got != rebuilt {
		t.Fatalf("read model digest %s with the consumer's table, a rebuild %s", got, rebuilt)
	}
}

// waitCheckpoint waits, woken by each checkpoint a subscription records,
// until name's checkpoint reaches seq (a run records it on catching up
// with the head, so it gets there).
func waitCheckpoint(t testing.TB, s *Store, name string, seq uint64) {
	t.Helper()
	for {
		bell := s.e.CheckpointBell()
		st, err := s.Subscriptions(ctx)
		mustT(t, err)
		for _, r := range st {
			if r.Name == name && r.Checkpoint >= seq {
				return
			}
		}
		<-bell
	}
}

func ledgerSeqs(t testing.TB, s *Store) []uint64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+s.ReadModelPath()+"?mode=ro")
	mustT(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT seq FROM app_ledger ORDER BY seq")
	mustT(t, err)
	defer rows.Close()
	var out []uint64
	for rows.Next() {
		var v uint64
		mustT(t, rows.Scan(&v))
		out = append(out, v)
	}
	mustT(t, rows.Err())
	return out
}

// TestEventsIteratesTypedCatalogueEventsFromASequence: Events yields the
// log's events from a sequence on, typed, in order, and stops when the
// loop breaks.
func TestEventsIteratesTypedCatalogueEventsFromASequence(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	commitAirports(t, s, 0, 8)
	var seqs []uint64
	persisted := 0
	for ev, err := range s.Events(ctx, 3) {
		mustT(t, err)
		seqs = append(seqs, ev.Seq)
		if p, ok := ev.Payload.(events.EntityPersisted); ok && ev.Type() == p.EventType() {
			persisted++
		}
	}
	if len(seqs) == 0 || seqs[0] != 3 || seqs[len(seqs)-1] != head(t, s) || persisted != 8 {
		t.Fatalf("Events(3) gave seqs %v with %d persisted events, want 3..%d and 8", seqs, persisted, head(t, s))
	}
	n := 0
	for range s.Events(ctx, 0) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("break after 2: %d", n)
	}
}

// rebuildDigest is the digest of a read model replayed from dir's log.
func rebuildDigest(t testing.TB, dir string) string {
	t.Helper()
	target := t.TempDir() + "/rebuilt.sqlite"
	_, err := Replay(ctx, dir, target, ReplayOptions{}, Entity[Airport]("Airport"))
	mustT(t, err)
	return digest(t, target)
}

// TestI34_CallbackCheckpointsOutliveARebuildOfTheReadModel: a rebuild
// (RebuildReadModel, or Open setting an unusable read model aside) keeps
// the callback subscriptions' checkpoints, whose consumers keep their
// state elsewhere; a transactional one goes with its tables, so it starts
// again from the first event with empty state.
func TestI34_CallbackCheckpointsOutliveARebuildOfTheReadModel(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	commitAirports(t, s, 0, 6)
	cbStop := errors.New("stop")
	cb := func(_ context.Context, ev Event) error {
		if ev.Seq == 5 {
			return cbStop
		}
		return nil
	}
	if err := s.Subscribe(ctx, "cb", cb, CheckpointEvery(1)); !errors.Is(err, cbStop) {
		t.Fatal(err)
	}
	if err := s.SubscribeTx(ctx, "tx", func(ctx context.Context, tx *sql.Tx, ev Event) error {
		if ev.Seq == 5 {
			return cbStop
		}
		return nil
	}, TxBatch(2)); !errors.Is(err, cbStop) {
		t.Fatal(err)
	}
	mustT(t, s.Close())
	_, _, err := RebuildReadModel(ctx, dir, ReplayOptions{}, Entity[Airport]("Airport"))
	mustT(t, err)
	wantCheckpoints(t, dir, map[string]uint64{"cb": 4})
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, ReadModelFile))
	mustT(t, err)
	_, err = db.Exec("UPDATE hk_meta SET value = 'another-store' WHERE key = 'store_id'")
	mustT(t, errors.Join(err, db.Close()))
	wantCheckpoints(t, dir, map[string]uint64{"cb": 4})
	if aside, _ := filepath.Glob(filepath.Join(dir, ReadModelFile+".unusable-*")); len(aside) == 0 {
		t.Fatal("Open did not set the read model of another store aside")
	}
}

// wantCheckpoints opens the store in dir and compares its subscriptions'
// checkpoints with want.
func wantCheckpoints(t *testing.T, dir string, want map[string]uint64) {
	t.Helper()
	s := openStore(t, dir)
	defer s.Close()
	all, err := s.Subscriptions(ctx)
	mustT(t, err)
	got := map[string]uint64{}
	for _, st := range all {
		got[st.Name] = st.Checkpoint
	}
	if !maps.Equal(got, want) {
		t.Fatalf("checkpoints %v, want %v", got, want)
	}
}
