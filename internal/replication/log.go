package replication

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// DefaultDuplicateWindow is how long the stream remembers idempotency
// keys. A retry later than this is still recognised (Append compares the
// message at the claimed position), so the window only bounds cost.
const DefaultDuplicateWindow = 2 * time.Minute

// headerRoom is what Append reserves in a message for the subject and
// headers when checking a commit against the server's maximum payload.
const headerRoom = 512

// Config names a store's log stream.
type Config struct {
	Store string // store id: A-Z a-z 0-9 _ -
	// Replicas of the stream; default DefaultReplicas (3). Use 1 only for
	// a single-server baseline: one server is no replication.
	Replicas int
	// Duplicates is the idempotency-key window; default
	// DefaultDuplicateWindow.
	Duplicates time.Duration
	// SettleWithin bounds Append's wait for a sequence the stream took to
	// become readable (the commit at it decides the append's answer);
	// default DefaultAppendTimeout.
	SettleWithin time.Duration
	// Clock times that wait; default events.SystemClock.
	Clock events.Clock
}

func (c Config) normalize() (Config, error) {
	if c.Replicas == 0 {
		c.Replicas = DefaultReplicas
	}
	if c.Duplicates == 0 {
		c.Duplicates = DefaultDuplicateWindow
	}
	if c.SettleWithin <= 0 {
		c.SettleWithin = DefaultAppendTimeout
	}
	if c.Clock == nil {
		c.Clock = events.SystemClock{}
	}
	if err := validateStore(c.Store); err != nil {
		return c, err
	}
	return c, validateReplicas(c.Replicas)
}

// jetStream is cfg normalized and the JetStream API over nc: the
// preamble of opening a store's stream (the log's, the key stream).
func (c Config) jetStream(nc *nats.Conn) (Config, jetstream.JetStream, error) {
	c, err := c.normalize()
	if err != nil {
		return c, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return c, nil, fmt.Errorf("%w: jetstream: %v", ErrUnavailable, err)
	}
	return c, js, nil
}

// Log is one store's replicated commit log. Append is for the lease
// holder; Head, ReadFrom and Follow for anyone. Safe for concurrent use,
// but appends are meant to come from one goroutine in commit order.
type Log struct {
	cfg     Config
	nc      *nats.Conn
	js      jetstream.JetStream
	stream  string
	subject string
	// getMsg reads the stream's message at seq (readMsg; tests make a
	// taken sequence not yet readable).
	getMsg func(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error)
}

// newLog is the log of cfg.Store over nc and js (cfg normalized).
func newLog(cfg Config, nc *nats.Conn, js jetstream.JetStream) *Log {
	l := &Log{cfg: cfg, nc: nc, js: js, stream: StreamName(cfg.Store), subject: Subject(cfg.Store)}
	l.getMsg = l.readMsg
	return l
}

// Open returns the log of cfg.Store over nc, creating its stream when
// missing: file storage, cfg.Replicas replicas, one subject, nothing
// discarded by limits (a full stream refuses new commits), deletes
// denied; purges allowed, for Purge (a stream an earlier build created
// denies them, and JetStream cannot lift that: it keeps every commit). An existing stream must capture Subject(store) and have
// at least cfg.Replicas replicas. Errors: ErrConfigInvalid,
// ErrUnavailable, ErrRejected.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Log, error) {
	cfg, js, err := cfg.jetStream(nc)
	if err != nil {
		return nil, err
	}
	l := newLog(cfg, nc, js)
	if err := l.ensureStream(ctx); err != nil {
		return nil, err
	}
	return l, nil
}

// OpenExisting returns the log of store over nc for reading (ReadFrom,
// Follow, Head): an auditor's or a restore's view, which never creates
// the stream. Errors: ErrConfigInvalid (a bad store name, or the stream
// does not capture the store's subject), ErrStreamNotFound,
// ErrUnavailable.
func OpenExisting(ctx context.Context, nc *nats.Conn, store string) (*Log, error) {
	cfg, js, err := Config{Store: store}.jetStream(nc)
	if err != nil {
		return nil, err
	}
	l := newLog(cfg, nc, js)
	s, err := js.Stream(ctx, l.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("%w: no stream %s for store %q", ErrStreamNotFound, l.stream, store)
	}
	if err != nil {
		return nil, classify(err, "stream "+l.stream)
	}
	if !slices.Contains(s.CachedInfo().Config.Subjects, l.subject) {
		return nil, fmt.Errorf("%w: stream %q does not capture %q", ErrConfigInvalid, l.stream, l.subject)
	}
	return l, nil
}

// Stream returns the stream's name.
func (l *Log) Stream() string { return l.stream }

func (l *Log) streamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        l.stream,
		Description: "hikoutei replicated log of store " + l.cfg.Store + " (one message per commit)",
		Subjects:    []string{l.subject},
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    l.cfg.Replicas,
		Duplicates:  l.cfg.Duplicates,
		MaxMsgs:     -1,
		MaxBytes:    -1,
		Discard:     jetstream.DiscardNew,
		DenyDelete:  true,
	}
}

func (l *Log) ensureStream(ctx context.Context) error {
	s, err := l.js.Stream(ctx, l.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = l.js.CreateStream(ctx, l.streamConfig())
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return l.ensureStream(ctx)
		}
		if err != nil {
			return classify(err, "create stream "+l.stream)
		}
		return nil
	}
	if err != nil {
		return classify(err, "stream "+l.stream)
	}
	got := s.CachedInfo().Config
	if !slices.Contains(got.Subjects, l.subject) || got.Replicas < l.cfg.Replicas {
		return fmt.Errorf("%w: existing stream %q captures %v with %d replica(s), want %q with %d",
			ErrConfigInvalid, l.stream, got.Subjects, got.Replicas, l.subject, l.cfg.Replicas)
	}
	return nil
}

// Head returns the stream's last sequence: the number of the last commit
// (0 when empty). A writer that just acquired the lease appends after it.
// Errors: ErrUnavailable, ErrRejected.
func (l *Log) Head(ctx context.Context) (uint64, error) {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return 0, classify(err, "stream "+l.stream)
	}
	return s.CachedInfo().State.LastSeq, nil
}

// MaxCommitBytes is the largest encoded commit Append accepts: the
// server's maximum payload less room for the subject and headers.
func (l *Log) MaxCommitBytes() int {
	return int(l.nc.MaxPayload()) - headerRoom
}

// Append stores records as ONE commit at position expectedLast+1, where
// expectedLast is the caller's view of the stream's last sequence (Head,
// or the previous Append's result). It returns the commit's sequence,
// which is expectedLast+1, once the stream acknowledged it (a quorum of
// replicas stored it).
//
// Idempotent: calling Append again with the same expectedLast and
// records returns the same sequence without storing a second copy, both
// inside the duplicate window (the server deduplicates by Nats-Msg-Id)
// and after it (Append recognises its own commit at that position).
//
// Errors: ErrFenced (the stream's head is not expectedLast and the
// commit at expectedLast+1 is not this one: NOT stored),
// ErrUnavailable (fate UNCERTAIN: retry with the same arguments; see the
// sentinel), ErrCommitTooLarge, ErrIdempotencyConflict, ErrRejected.
func (l *Log) Append(ctx context.Context, expectedLast uint64, records [][]byte) (uint64, error) {
	body := EncodeCommit(records)
	if max := l.MaxCommitBytes(); len(body) > max {
		return 0, fmt.Errorf("%w: %d bytes encoded, at most %d", ErrCommitTooLarge, len(body), max)
	}
	pos := expectedLast + 1
	m := nats.NewMsg(l.subject)
	m.Data = body
	m.Header.Set(jetstream.MsgIDHeader, MsgID(pos, body))
	m.Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(expectedLast, 10))
	m.Header.Set(jetstream.ExpectedStreamHeader, l.stream)
	ack, err := l.js.PublishMsg(ctx, m)
	if err != nil {
		return l.settleRefusal(ctx, pos, body, err)
	}
	return l.settleAck(ctx, pos, body, ack)
}

// settleAck checks an acknowledgement: a new commit must sit at pos; a
// duplicate must be this very commit.
func (l *Log) settleAck(ctx context.Context, pos uint64, body []byte, ack *jetstream.PubAck) (uint64, error) {
	if ack.Sequence != pos {
		// Cannot happen with the expected-sequence header; refuse loudly.
		return 0, fmt.Errorf("%w: acknowledged at sequence %d, expected %d", ErrRejected, ack.Sequence, pos)
	}
	if !ack.Duplicate {
		return pos, nil
	}
	return l.ownsPosition(ctx, pos, body, ErrIdempotencyConflict)
}

// settleRefusal turns a publish error into the package's errors. A
// wrong-last-sequence refusal is ErrFenced unless the commit at pos is
// this one (an earlier attempt landed after the duplicate window).
func (l *Log) settleRefusal(ctx context.Context, pos uint64, body []byte, err error) (uint64, error) {
	serverLast, known, fenced := wrongLastSequence(err)
	if !fenced {
		return 0, classify(err, "append at sequence "+strconv.FormatUint(pos, 10))
	}
	if known && serverLast < pos {
		return 0, fmt.Errorf("%w: the stream ends at sequence %d, the writer expected %d", ErrFenced, serverLast, pos-1)
	}
	return l.ownsPosition(ctx, pos, body, ErrFenced)
}

// ownsPosition returns pos when the stream's message at pos is body;
// otherwise notOurs. The stream may have taken pos without its message
// being readable yet (a proposal the leader counted that no quorum
// stored yet): it waits until it is (readable), then decides; still
// unreadable past Config.SettleWithin, the outcome stays uncertain.
func (l *Log) ownsPosition(ctx context.Context, pos uint64, body []byte, notOurs error) (uint64, error) {
	msg, err := l.readable(ctx, pos)
	if err != nil {
		return 0, err
	}
	if msg.Header.Get(jetstream.MsgIDHeader) != MsgID(pos, body) {
		return 0, fmt.Errorf("%w: sequence %d holds another writer's commit", notOurs, pos)
	}
	return pos, nil
}

// settlePause is the first pause between looks at a taken sequence; each
// next one doubles, up to settlePauseMax.
const (
	settlePause    = 50 * time.Millisecond
	settlePauseMax = time.Second
)

// readable returns the stream's message at pos once it can be read,
// looking again after a pause on the log's clock while the stream answers
// that it has none, until Config.SettleWithin passed or ctx ends (a
// Replicator's try ends first): ErrUnavailable and ErrSequenceUnreadable
// either way.
func (l *Log) readable(ctx context.Context, pos uint64) (*jetstream.RawStreamMsg, error) {
	clock := l.cfg.Clock
	bound := clock.Now().Add(l.cfg.SettleWithin)
	for pause := settlePause; ; pause = min(2*pause, settlePauseMax) {
		msg, err := l.getMsg(ctx, pos)
		switch {
		case err == nil:
			return msg, nil
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			return nil, classify(err, "read sequence "+strconv.FormatUint(pos, 10))
		}
		left := bound.Sub(clock.Now())
		if left <= 0 {
			return nil, fmt.Errorf("%w: %w: sequence %d is taken but was not readable within %s", ErrUnavailable, ErrSequenceUnreadable,
				pos, l.cfg.SettleWithin)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w: sequence %d is taken but not yet readable: %w", ErrUnavailable, ErrSequenceUnreadable,
				pos, ctx.Err())
		case <-clock.After(min(pause, left)):
		}
	}
}

// readMsg reads the stream's message at seq.
func (l *Log) readMsg(ctx context.Context, seq uint64) (*jetstream.RawStreamMsg, error) {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return nil, err
	}
	return s.GetMsg(ctx, seq)
}

// wrongLastSequence reports a Nats-Expected-Last-Sequence refusal
// (10071, whose description names the stream's last sequence; 10164
// without it) and that last sequence when given (known).
func wrongLastSequence(err error) (serverLast uint64, known, ok bool) {
	var je jetstream.JetStreamError
	if !errors.As(err, &je) || je.APIError() == nil {
		return 0, false, false
	}
	switch api := je.APIError(); api.ErrorCode {
	case jetstream.JSErrCodeStreamWrongLastSequence:
		_, tail, _ := strings.Cut(api.Description, ": ")
		n, perr := strconv.ParseUint(strings.TrimSpace(tail), 10, 64)
		return n, perr == nil, true
	case jetstream.JSErrCodeStreamWrongLastSequenceConstant:
		return 0, false, true
	}
	return 0, false, false
}

// classify maps a JetStream error that is not a fencing refusal: a
// definite refusal by the server is ErrRejected (nothing stored); a
// missing answer is ErrUnavailable (uncertain). Only refusals known to
// be definite are ErrRejected.
func classify(err error, what string) error {
	var je jetstream.JetStreamError
	if errors.As(err, &je) && je.APIError() != nil {
		switch je.APIError().ErrorCode {
		case jetstream.JSErrCodeStreamNotFound, jetstream.JSErrCodeStreamMessageExceedsMaximum, jetstream.JSErrCodeBadRequest:
			return fmt.Errorf("%w: %s: %v", ErrRejected, what, err)
		}
	}
	return fmt.Errorf("%w: %s: %v", ErrUnavailable, what, err)
}

// metaStoreID is the stream metadata key naming the store id of the logs
// that replicate through it (every host's log of one store has that id).
const metaStoreID = "hikoutei_store_id"

// StoreID returns the store id the stream was claimed for ("" when no
// primary claimed it yet). Errors: ErrUnavailable, ErrRejected.
func (l *Log) StoreID(ctx context.Context) (string, error) {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return "", classify(err, "stream "+l.stream)
	}
	return s.CachedInfo().Config.Metadata[metaStoreID], nil
}

// ClaimStoreID records id as the store id of the stream's logs when none
// is recorded; a stream already claimed for another id is refused
// (ErrConfigInvalid): it replicates another store. Errors: as StoreID.
func (l *Log) ClaimStoreID(ctx context.Context, id string) error {
	s, err := l.js.Stream(ctx, l.stream)
	if err != nil {
		return classify(err, "stream "+l.stream)
	}
	cfg := s.CachedInfo().Config
	switch got := cfg.Metadata[metaStoreID]; {
	case got == id:
		return nil
	case got != "":
		return fmt.Errorf("%w: stream %q replicates store %s, not %s", ErrConfigInvalid, l.stream, got, id)
	}
	if cfg.Metadata == nil {
		cfg.Metadata = map[string]string{}
	}
	cfg.Metadata[metaStoreID] = id
	if _, err := l.js.UpdateStream(ctx, cfg); err != nil {
		return classify(err, "claim stream "+l.stream)
	}
	return nil
}
