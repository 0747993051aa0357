package hikoutei

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// Event is one committed event of the log as a subscriber reads it: the
// envelope without the writer's fencing token, and the typed payload, one
// of the catalogue's types in package events (docs/events.md), upcast to
// this build's schema. Switch on the payload's type to handle it.
type Event struct {
	Seq     uint64         // global sequence, dense from 1
	Stream  string         // e.g. "entity/Airport/LAX"
	Version uint64         // per-stream version, dense from 1
	At      time.Time      // the clock reading the decision used (UTC)
	Commit  string         // id shared by the events of one commit
	Payload events.Payload // e.g. events.EntityPersisted
}

// Type is the event's catalogue type, e.g. "entity.persisted".
func (e Event) Type() events.Type { return e.Payload.EventType() }

// publicEvent is e as a reader sees it: sealed personal values opened
// with the key file, or ErasedValue once their subject was erased.
// Errors: ErrPersonalKeysLost, ErrSealedValueMalformed.
func (s *Store) publicEvent(e events.Event) (Event, error) {
	p, err := s.keys.openPayload(e.Payload)
	if err != nil {
		return Event{}, fmt.Errorf("seq %d: %w", e.Seq, err)
	}
	return Event{Seq: e.Seq, Stream: e.Stream, Version: e.Version, At: e.At, Commit: e.Commit, Payload: p}, nil
}

// errStopIteration ends a log read when the consumer of Events stops.
var errStopIteration = errors.New("iteration stopped")

// Events iterates over the committed events from seq from on (0 and 1
// both mean the first), in log order, up to the head as the iteration
// reaches it. A read error (a corrupt record: ErrLogRecordCorrupt; a
// payload this build cannot decode: ErrEventTypeUnknown), ctx ending or
// the store closing is yielded once as the error, and ends the
// iteration. The log is read in chunks outside any lock: a slow loop body
// never holds up commits.
func (s *Store) Events(ctx context.Context, from uint64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if s.e.Closed() {
			yield(Event{}, ErrStoreClosed)
			return
		}
		err := s.e.Log().ReadFrom(from, func(e events.Event) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			pe, err := s.publicEvent(e)
			if err != nil {
				return err
			}
			if !yield(pe, nil) {
				return errStopIteration
			}
			return nil
		})
		if err != nil && !errors.Is(err, errStopIteration) {
			yield(Event{}, err)
		}
	}
}

// Handler handles one event of a subscription. Returning an error stops
// the subscription before that event (it is delivered again by the next
// Subscribe).
type Handler func(ctx context.Context, ev Event) error

// TxHandler handles one event of a transactional subscription inside tx,
// a transaction on the read model's database (read.sqlite) that the store
// commits together with the subscription's checkpoint: the consumer's
// own tables in that database change exactly once per event. tx is
// valid only during the call; do not commit or roll it back.
type TxHandler func(ctx context.Context, tx *sql.Tx, ev Event) error

// SubscribeOption tunes Subscribe and SubscribeTx.
type SubscribeOption func(*subscribeOptions)

// subscribeOptions are the tunings a SubscribeOption sets (0: default).
type subscribeOptions struct {
	checkpointEvery, txBatch int
}

// CheckpointEvery sets how many events a Subscribe handler handles between
// checkpoint writes (default 100): the at-least-once window. 1 records
// after every event.
func CheckpointEvery(n int) SubscribeOption {
	return func(o *subscribeOptions) { o.checkpointEvery = n }
}

// TxBatch sets how many events SubscribeTx handles in one transaction
// (default 100). The transaction holds the read model's write lock while
// it runs, so commits' projection waits for it: keep batches short.
func TxBatch(n int) SubscribeOption {
	return func(o *subscribeOptions) { o.txBatch = n }
}

// Subscribe runs the named subscription: it delivers every committed event
// after the subscription's durable checkpoint, in order, to h — first
// those already in the log (catch-up), then each commit as it lands — and
// records the checkpoint in the read model (table hk_subscriptions). It
// blocks until ctx is done (returning ctx's error), the store closes
// (ErrStoreClosed) or h fails (*SubscriptionError, matching
// ErrSubscriptionHandler or ErrSubscriptionPanic: a panic is recovered).
// Call it again, in this process or after a restart, to resume.
//
// Delivery is at least once. The checkpoint is recorded after every
// CheckpointEvery events h returned nil for (default 100), whenever the
// subscription has caught up with the head, and when it stops (up to
// the last event h returned nil for). After a crash the events handled
// since the last record are delivered again: at most CheckpointEvery
// events, each with a seq in (checkpoint, checkpoint+CheckpointEvery].
// No event is ever skipped. Errors also: ErrInvalidSubscription,
// ErrSubscriptionActive (one run per name at a time), I/O errors.
func (s *Store) Subscribe(ctx context.Context, name string, h Handler, opts ...SubscribeOption) error {
	c := engine.Subscribe{Name: name}
	if h != nil {
		c.Handle = func(ctx context.Context, e events.Event) error {
			pe, err := s.publicEvent(e)
			if err != nil {
				return err
			}
			return h(ctx, pe)
		}
	}
	return s.e.Subscribe(ctx, subscribeConfig(c, opts))
}

// SubscribeTx is Subscribe for a consumer whose state lives in the read
// model's database: h runs inside a transaction that the store commits
// with the checkpoint after TxBatch events (default 100) or on catching
// up with the head. An error or panic of h, ctx ending or a crash rolls
// the open transaction back, so the consumer's state and checkpoint
// always agree: each event changes the state exactly once. Name the
// consumer's tables without the hk_ prefix and not after an entity; the
// store ignores such tables (its schema check and digests leave them
// out). A rebuild of the read model (`hikoutei replay`, a corrupt file)
// drops them with the checkpoint: the subscription then starts again from
// the first event. Errors as Subscribe.
func (s *Store) SubscribeTx(ctx context.Context, name string, h TxHandler, opts ...SubscribeOption) error {
	c := engine.Subscribe{Name: name}
	if h != nil {
		c.HandleTx = func(ctx context.Context, tx *sql.Tx, e events.Event) error {
			pe, err := s.publicEvent(e)
			if err != nil {
				return err
			}
			return h(ctx, tx, pe)
		}
	}
	return s.e.Subscribe(ctx, subscribeConfig(c, opts))
}

func subscribeConfig(c engine.Subscribe, opts []SubscribeOption) engine.Subscribe {
	var o subscribeOptions
	for _, opt := range opts {
		opt(&o)
	}
	c.CheckpointEvery, c.TxBatch = o.checkpointEvery, o.txBatch
	return c
}

// SubscriptionError says which event a subscription's handler failed on
// (see Subscribe). errors.Is matches ErrSubscriptionHandler or
// ErrSubscriptionPanic, and the handler's own error.
type SubscriptionError struct {
	Name  string // the subscription
	Seq   uint64 // the event the handler failed on; the checkpoint is before it
	Panic any    // the recovered value when the handler panicked (nil otherwise)
	Err   error  // the handler's error (nil after a panic)
}

func (e *SubscriptionError) Error() string { return (*engine.SubscriptionError)(e).Error() }

// Unwrap gives the sentinel and the handler's error.
func (e *SubscriptionError) Unwrap() []error { return (*engine.SubscriptionError)(e).Unwrap() }

// SubscriptionCheckpointError is a subscription checkpoint the log
// cannot have written: negative, or past the log head. It matches
// ErrSubscriptionCheckpoint.
type SubscriptionCheckpointError struct {
	Name       string
	Checkpoint int64  // as stored
	Head       uint64 // the log head
}

func (e *SubscriptionCheckpointError) Error() string {
	return (*engine.SubscriptionCheckpointError)(e).Error()
}

// Unwrap gives ErrSubscriptionCheckpoint.
func (e *SubscriptionCheckpointError) Unwrap() error { return ErrSubscriptionCheckpoint }

// SubscriptionStatus is a named subscription's durable checkpoint and
// lag.
type SubscriptionStatus struct {
	Name string
	// Mode: "callback" (Subscribe) or "transactional" (SubscribeTx).
	Mode       string
	Checkpoint uint64 // the last event recorded as handled
	Lag        uint64 // events committed after the checkpoint
	Running    bool   // a Subscribe of this name runs in this process
	// Err is set when the checkpoint is one the log cannot have written
	// (past the log head, or negative: ErrSubscriptionCheckpoint);
	// Subscribe then refuses to run it instead of skipping events.
	Err error
}

// Subscriptions lists the subscriptions the store records, by name.
// Errors: ErrStoreClosed, I/O errors.
func (s *Store) Subscriptions(ctx context.Context) ([]SubscriptionStatus, error) {
	rows, err := s.e.Subscriptions(ctx)
	out := make([]SubscriptionStatus, len(rows))
	for i, r := range rows {
		out[i] = SubscriptionStatus{Name: r.Name, Mode: string(r.Mode), Checkpoint: r.Checkpoint, Lag: r.Lag, Running: r.Running, Err: r.Err}
	}
	return out, err
}
