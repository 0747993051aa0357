package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	_ "modernc.org/sqlite" // the database/sql driver a transactional handler's *sql.Tx runs on

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Subscription defaults.
const (
	// DefaultCheckpointEvery is how many events a callback subscription
	// handles between checkpoint writes (its at-least-once window).
	DefaultCheckpointEvery = 100
	// DefaultTxBatch is how many events a transactional subscription
	// handles in one read-model transaction.
	DefaultTxBatch = 100
	// maxSubscriptionName bounds a subscription's name in bytes.
	maxSubscriptionName = 200
	// checkpointBusyMS is how long a checkpoint transaction waits for the
	// read model's write lock (the projector's commits hold it briefly).
	checkpointBusyMS = 10000
)

// Subscribe configures one run of a named subscription: exactly one of
// Handle (callback mode) and HandleTx (transactional mode).
type Subscribe struct {
	Name string
	// Handle is called for each event in order; the store records the
	// checkpoint after every CheckpointEvery events it returned nil for,
	// when it has caught up with the head, and when the run stops.
	Handle func(ctx context.Context, ev events.Event) error
	// HandleTx is called for each event in order inside a read-model
	// transaction that the store commits with the checkpoint after
	// TxBatch events or on catching up; an error rolls it back.
	HandleTx        func(ctx context.Context, tx *sql.Tx, ev events.Event) error
	CheckpointEvery int // 0: DefaultCheckpointEvery
	TxBatch         int // 0: DefaultTxBatch
}

func (c Subscribe) check() (Subscribe, error) {
	switch {
	case c.Name == "" || len(c.Name) > maxSubscriptionName:
		return c, fmt.Errorf("%w: a name of 1 to %d bytes", ErrInvalidSubscription, maxSubscriptionName)
	case (c.Handle == nil) == (c.HandleTx == nil):
		return c, fmt.Errorf("%w: give one handler", ErrInvalidSubscription)
	case c.CheckpointEvery < 0 || c.TxBatch < 0:
		return c, fmt.Errorf("%w: a negative batch size", ErrInvalidSubscription)
	}
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	if c.TxBatch == 0 {
		c.TxBatch = DefaultTxBatch
	}
	return c, nil
}

func (c Subscribe) mode() projector.SubscriptionMode {
	if c.HandleTx != nil {
		return projector.SubscriptionTransactional
	}
	return projector.SubscriptionCallback
}

// Subscribe runs a named subscription until ctx is done (it returns
// ctx's error), the store closes (ErrStoreClosed) or a handler fails
// (*SubscriptionError): from the event after its durable checkpoint to
// the head, then each commit as it lands, woken by the writer. Errors
// also: ErrInvalidSubscription, ErrSubscriptionActive, log and read-model
// I/O errors.
func (e *Engine) Subscribe(ctx context.Context, c Subscribe) error {
	c, err := c.check()
	if err != nil {
		return err
	}
	ctx, done, err := e.subs.start(ctx, c.Name)
	if err != nil {
		return err
	}
	defer done()
	db, err := openCheckpoints(e.ReadModelPath())
	if err != nil {
		return err
	}
	defer db.Close()
	r := &subRun{e: e, c: c, db: db}
	return stopCause(ctx, r.run(ctx))
}

// stopCause reports why a run stopped: the store's closing rather than
// the cancellation it caused.
func stopCause(ctx context.Context, err error) error {
	if errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), ErrStoreClosed) {
		return ErrStoreClosed
	}
	return err
}

// openCheckpoints opens the read model through database/sql: one
// connection whose transactions take the write lock at BEGIN.
func openCheckpoints(path string) (*sql.DB, error) {
	db, err := sql.Open("sqlite", fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_txlock=immediate", path, checkpointBusyMS))
	if err != nil {
		return nil, fmt.Errorf("open the read model for a subscription: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// subRun is one run of a subscription.
type subRun struct {
	e  *Engine
	c  Subscribe
	db *sql.DB
	cp uint64 // the durable checkpoint
}

func (r *subRun) run(ctx context.Context) error {
	if err := r.load(ctx); err != nil {
		return err
	}
	for {
		bell := r.e.CommitBell() // before reading the head: a commit after it rings this bell
		head, err := r.e.Log().Head()
		if err != nil {
			return err
		}
		if r.cp < head {
			if err := r.deliver(ctx); err != nil {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-bell:
		}
	}
}

// load reads the durable checkpoint and checks it against the log head,
// as the read model's own checkpoint is: one the log cannot have written
// (negative, past the head) is a *SubscriptionCheckpointError, never a
// silent skip of every event up to it.
func (r *subRun) load(ctx context.Context) error {
	var stored int64
	err := r.db.QueryRowContext(ctx, "SELECT checkpoint FROM hk_subscriptions WHERE name = ?", r.c.Name).Scan(&stored)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the checkpoint of subscription %q: %w", r.c.Name, err)
	}
	head, err := r.e.Log().Head()
	if err != nil {
		return err
	}
	if err := CheckSubscriptionCheckpoint(r.c.Name, stored, head); err != nil {
		return err
	}
	r.cp = uint64(stored)
	return nil
}

func (r *subRun) deliver(ctx context.Context) error {
	if r.c.HandleTx != nil {
		return r.deliverTx(ctx)
	}
	return r.deliverCallback(ctx)
}

// deliverCallback hands the events after the checkpoint to Handle,
// recording the checkpoint every CheckpointEvery events and at the end
// (also after a failure: up to the last event handled).
func (r *subRun) deliverCallback(ctx context.Context) error {
	last, pending := r.cp, 0
	err := r.e.Log().ReadFrom(r.cp+1, func(ev events.Event) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.call(ctx, ev); err != nil {
			return err
		}
		last, pending = ev.Seq, pending+1
		if pending < r.c.CheckpointEvery {
			return nil
		}
		pending = 0
		return r.save(ctx, last)
	})
	if last > r.cp {
		err = errors.Join(err, r.save(ctx, last))
	}
	return err
}

// call runs Handle for ev, turning a panic into an error.
func (r *subRun) call(ctx context.Context, ev events.Event) (err error) {
	defer r.recoverInto(ev, &err)
	if herr := r.c.Handle(ctx, ev); herr != nil {
		return &SubscriptionError{Name: r.c.Name, Seq: ev.Seq, Err: herr}
	}
	return nil
}

func (r *subRun) recoverInto(ev events.Event, err *error) {
	if p := recover(); p != nil {
		*err = &SubscriptionError{Name: r.c.Name, Seq: ev.Seq, Panic: p}
	}
}

// save records cp as the subscription's checkpoint in its own transaction.
// Not bound to ctx: the events up to cp were handled, and database/sql
// rolls back a transaction whose context ends (its Exec and Commit then
// fail with ErrTxDone), so a run stopped mid-write would lose the record
// and report a bare SQL error instead of ctx's. The busy timeout bounds it.
func (r *subRun) save(ctx context.Context, cp uint64) error {
	ctx = context.WithoutCancel(ctx)
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return r.writeFailed(err)
	}
	if err := r.saveIn(ctx, tx, cp); err != nil {
		return errors.Join(err, ignoreDone(tx.Rollback()))
	}
	return r.commit(tx, cp)
}

// writeFailed wraps a failure to record the checkpoint:
// ErrSubscriptionCheckpointWrite, never a bare SQL error.
func (r *subRun) writeFailed(err error) error {
	return fmt.Errorf("%w: subscription %q: %w", ErrSubscriptionCheckpointWrite, r.c.Name, err)
}

func (r *subRun) saveIn(ctx context.Context, tx *sql.Tx, cp uint64) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO hk_subscriptions(name, mode, checkpoint) VALUES (?, ?, ?)
ON CONFLICT(name) DO UPDATE SET mode = excluded.mode, checkpoint = excluded.checkpoint`, r.c.Name, string(r.c.mode()), int64(cp))
	if err != nil {
		return r.writeFailed(err)
	}
	return nil
}

func (r *subRun) commit(tx *sql.Tx, cp uint64) error {
	if err := tx.Commit(); err != nil {
		return r.writeFailed(err)
	}
	r.cp = cp
	r.e.subs.recorded.ring()
	return nil
}

// subscriptions tracks a store's running subscriptions and wakes them at
// each commit. The zero value is ready.
type subscriptions struct {
	commits  bell // rung when the log commits
	recorded bell // rung when a subscription records its checkpoint
	mu       sync.Mutex
	active   map[string]context.CancelCauseFunc
	wg       sync.WaitGroup
	shut     bool
}

// bell hands out a channel that is closed at the next ring. The zero
// value is ready.
type bell struct {
	mu sync.Mutex
	ch chan struct{} // nil: nobody waits yet
}

// wait returns a channel closed at the next ring.
func (b *bell) wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch == nil {
		b.ch = make(chan struct{})
	}
	return b.ch
}

// ring wakes every waiter.
func (b *bell) ring() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ch != nil {
		close(b.ch)
		b.ch = nil
	}
}

// committed wakes the subscriptions waiting for a commit (the log just
// committed one).
func (s *subscriptions) committed() { s.commits.ring() }

// start registers a run of name: ErrSubscriptionActive when one runs,
// ErrStoreClosed after stop. done unregisters it.
func (s *subscriptions) start(ctx context.Context, name string) (context.Context, func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shut {
		return nil, nil, ErrStoreClosed
	}
	if s.active[name] != nil {
		return nil, nil, fmt.Errorf("%w: %q", ErrSubscriptionActive, name)
	}
	if s.active == nil {
		s.active = map[string]context.CancelCauseFunc{}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	s.active[name] = cancel
	s.wg.Add(1)
	return ctx, func() {
		s.mu.Lock()
		delete(s.active, name)
		s.mu.Unlock()
		cancel(nil)
		s.wg.Done()
	}, nil
}

// stop ends every run (they return ErrStoreClosed) and waits for them.
func (s *subscriptions) stop() {
	s.mu.Lock()
	s.shut = true
	for _, cancel := range s.active {
		cancel(ErrStoreClosed)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.recorded.ring()
}

// SubscriptionStatus is one named subscription's checkpoint and lag.
type SubscriptionStatus struct {
	Name       string
	Mode       projector.SubscriptionMode
	Checkpoint uint64 // the last event recorded as handled
	Lag        uint64 // events committed after it (head − checkpoint)
	Running    bool   // a run is active in this process
	// Err is a checkpoint the log cannot have written (negative, or past
	// the head: *SubscriptionCheckpointError); Subscribe refuses to run it.
	Err error
}

// Subscriptions lists every subscription the read model records, by
// name, with its lag behind the log head. Errors: ErrStoreClosed, I/O.
func (e *Engine) Subscriptions(ctx context.Context) ([]SubscriptionStatus, error) {
	conn, err := e.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := projector.ListSubscriptions(conn)
	e.PutConn(conn)
	if err != nil {
		return nil, err
	}
	head, err := e.Log().Head()
	if err != nil {
		return nil, err
	}
	out := make([]SubscriptionStatus, len(rows))
	for i, r := range rows {
		out[i] = SubscriptionStatus{Name: r.Name, Mode: r.Mode, Checkpoint: r.Checkpoint, Lag: head - min(head, r.Checkpoint),
			Running: e.subs.running(r.Name), Err: CheckSubscriptionCheckpoint(r.Name, r.Stored, head)}
		if out[i].Err != nil {
			out[i].Lag = 0
		}
	}
	return out, nil
}

func (s *subscriptions) running(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[name] != nil
}

// Closed reports whether Close was called.
func (e *Engine) Closed() bool { return e.isClosed() }

// CommitBell returns a channel closed when the log next commits (or the
// store closes): wait on it to watch the store without polling.
func (e *Engine) CommitBell() <-chan struct{} { return e.subs.commits.wait() }

// CheckpointBell returns a channel closed when a subscription next
// records its checkpoint (or the store closes).
func (e *Engine) CheckpointBell() <-chan struct{} { return e.subs.recorded.wait() }
