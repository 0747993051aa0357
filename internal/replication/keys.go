package replication

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The key stream of a store (KeyStreamName, KeySubjectPrefix) carries the
// key material of its personal fields from the primary to its standbys
// (docs/replication.md, "Personal data keys"), apart from the log: no
// key is ever in a commit, so none is in the log's hashed bytes. One
// message per subject name, the last kept (MaxMsgsPerSubject 1):
//
//	hikoutei.keys.<store>.file          the key file's identity
//	hikoutei.keys.<store>.key.<digest>  a data subject's live key
//	hikoutei.keys.<store>.erased.<dig>  an erasure (the generation destroyed)
//
// Bodies are opaque here (the keyring's grants). An erasure deletes the
// subject's key message with the server's secure delete (its bytes
// overwritten in the stream's files) before it publishes the erasure.
const (
	KeyStreamPrefix  = "HIKOUTEI_KEYS_"
	KeySubjectPrefix = "hikoutei.keys."
)

// Kinds of key stream messages.
const (
	KeyKindFile   = "file"
	KeyKindKey    = "key"
	KeyKindErased = "erased"
)

// KeyStreamName is the key stream of store: "HIKOUTEI_KEYS_<STORE>".
func KeyStreamName(store string) string {
	return KeyStreamPrefix + strings.TrimPrefix(StreamName(store), StreamPrefix)
}

// KeyMsg is one message of the key stream.
type KeyMsg struct {
	Kind   string // KeyKindFile, KeyKindKey, KeyKindErased
	Digest string // the subject's digest (not for KeyKindFile)
	Body   []byte
}

// KeyStream is one store's key stream. Safe for concurrent use.
type KeyStream struct {
	js     jetstream.JetStream
	stream string
	prefix string // "hikoutei.keys.<store>."
}

// OpenKeyStream returns the key stream of cfg.Store over nc, creating it
// when missing (file storage, cfg.Replicas replicas, the last message of
// each subject kept, deletes and purges allowed: an erasure needs them).
// Errors: ErrConfigInvalid, ErrUnavailable, ErrRejected.
func OpenKeyStream(ctx context.Context, nc *nats.Conn, cfg Config) (*KeyStream, error) {
	cfg, js, err := cfg.jetStream(nc)
	if err != nil {
		return nil, err
	}
	k := &KeyStream{js: js, stream: KeyStreamName(cfg.Store), prefix: KeySubjectPrefix + cfg.Store + "."}
	_, err = js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{
		Name:              k.stream,
		Description:       "hikoutei personal data keys of store " + cfg.Store + " (docs/replication.md)",
		Subjects:          []string{k.prefix + ">"},
		Storage:           jetstream.FileStorage,
		Replicas:          cfg.Replicas,
		MaxMsgsPerSubject: 1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
	})
	if err != nil {
		return nil, classify(err, "key stream "+k.stream)
	}
	return k, nil
}

// Stream is the key stream's name.
func (k *KeyStream) Stream() string { return k.stream }

func (k *KeyStream) subject(kind, digest string) string {
	if kind == KeyKindFile {
		return k.prefix + kind
	}
	return k.prefix + kind + "." + digest
}

// File returns the key file identity the stream holds (ok false: none).
func (k *KeyStream) File(ctx context.Context) (body []byte, ok bool, err error) {
	m, err := k.last(ctx, k.subject(KeyKindFile, ""))
	if err != nil || m == nil {
		return nil, false, err
	}
	return m.Data, true, nil
}

// Key returns digest's key message (ok false: none).
func (k *KeyStream) Key(ctx context.Context, digest string) (body []byte, ok bool, err error) {
	m, err := k.last(ctx, k.subject(KeyKindKey, digest))
	if err != nil || m == nil {
		return nil, false, err
	}
	return m.Data, true, nil
}

// ClaimFile stores body as the key file identity when the stream has none
// and returns the identity the stream holds afterwards (body, or the one
// another primary stored first).
func (k *KeyStream) ClaimFile(ctx context.Context, body []byte) ([]byte, error) {
	_, err := k.js.Publish(ctx, k.subject(KeyKindFile, ""), body, jetstream.WithExpectLastSequencePerSubject(0))
	if err == nil {
		return body, nil
	}
	if _, _, fenced := wrongLastSequence(err); !fenced {
		return nil, classify(err, "claim the key file identity")
	}
	got, ok, err := k.File(ctx)
	if err == nil && !ok {
		err = fmt.Errorf("%w: the key file identity is neither stored nor storable", ErrRejected)
	}
	return got, err
}

// Put stores a key message (a subject's key or erasure), once the stream
// acknowledged it.
func (k *KeyStream) Put(ctx context.Context, kind, digest string, body []byte) error {
	if _, err := k.js.Publish(ctx, k.subject(kind, digest), body); err != nil {
		return classify(err, "store a "+kind+" message")
	}
	return nil
}

// epochHeader names the lease epoch of the primary that stored a key
// message.
const epochHeader = "Hikoutei-Epoch"

// Grant stores digest's key message body for the primary of lease epoch
// epoch when the stream holds none for digest (or holds this one). A key
// stored there by a primary of an older epoch (one that was deposed
// before any commit of it with that key reached the log) is replaced;
// one stored by this epoch or a newer one is ErrFenced: a second key
// must never replace the one the store's values are sealed with.
func (k *KeyStream) Grant(ctx context.Context, digest string, body []byte, epoch uint64) error {
	subject := k.subject(KeyKindKey, digest)
	err := k.publishKey(ctx, subject, body, epoch, 0)
	if _, _, fenced := wrongLastSequence(err); !fenced {
		return err
	}
	m, err := k.last(ctx, subject)
	switch {
	case err != nil:
		return err
	case m == nil || string(m.Data) == string(body):
		return nil
	}
	stored, _ := strconv.ParseUint(m.Header.Get(epochHeader), 10, 64)
	if stored >= epoch {
		return fmt.Errorf("%w: the key stream holds another key for subject %s (stored at lease epoch %d, this primary's is %d)", ErrFenced, digest, stored, epoch)
	}
	err = k.publishKey(ctx, subject, body, epoch, m.Sequence)
	if _, _, fenced := wrongLastSequence(err); fenced {
		return fmt.Errorf("%w: the key message of subject %s changed meanwhile", ErrFenced, digest)
	}
	return err
}

// publishKey publishes a key message expecting the subject's last
// sequence to be last (0: none).
func (k *KeyStream) publishKey(ctx context.Context, subject string, body []byte, epoch, last uint64) error {
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(epochHeader, strconv.FormatUint(epoch, 10))
	_, err := k.js.PublishMsg(ctx, m, jetstream.WithExpectLastSequencePerSubject(last))
	if err == nil {
		return nil
	}
	if _, _, fenced := wrongLastSequence(err); fenced {
		return err
	}
	return classify(err, "store a key message")
}

// Erase stores the erasure of digest (body), then deletes its key
// message with the server's secure delete (its bytes overwritten).
func (k *KeyStream) Erase(ctx context.Context, digest string, body []byte) error {
	if err := k.Put(ctx, KeyKindErased, digest, body); err != nil {
		return err
	}
	return k.DropKey(ctx, digest)
}

// DropKey deletes digest's key message (none: nothing to do) with the
// server's secure delete.
func (k *KeyStream) DropKey(ctx context.Context, digest string) error {
	s, err := k.js.Stream(ctx, k.stream)
	if err != nil {
		return classify(err, "key stream "+k.stream)
	}
	for range 8 { // a message published meanwhile is deleted too
		m, err := k.last(ctx, k.subject(KeyKindKey, digest))
		if err != nil || m == nil {
			return err
		}
		err = s.SecureDeleteMsg(ctx, m.Sequence)
		if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return classify(err, "delete a key message")
		}
	}
	return fmt.Errorf("%w: the key message of %s keeps coming back", ErrRejected, digest)
}

func (k *KeyStream) last(ctx context.Context, subject string) (*jetstream.RawStreamMsg, error) {
	s, err := k.js.Stream(ctx, k.stream)
	if err != nil {
		return nil, classify(err, "key stream "+k.stream)
	}
	m, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, classify(err, "read "+subject)
	}
	return m, nil
}

// ReadAll calls fn with every message the stream holds as of the call,
// in stream order.
func (k *KeyStream) ReadAll(ctx context.Context, fn func(KeyMsg) error) error {
	s, err := k.js.Stream(ctx, k.stream)
	if err != nil {
		return classify(err, "key stream "+k.stream)
	}
	if s.CachedInfo().State.Msgs == 0 {
		return nil
	}
	return k.consume(ctx, true, fn)
}

// Follow calls fn with every message of the stream, then with each new
// one as it is stored, until ctx ends (ctx.Err()) or fn fails.
func (k *KeyStream) Follow(ctx context.Context, fn func(KeyMsg) error) error {
	return k.consume(ctx, false, fn)
}

// consume reads from the first message on; once: until none is pending.
func (k *KeyStream) consume(ctx context.Context, once bool, fn func(KeyMsg) error) error {
	cons, err := k.js.OrderedConsumer(ctx, k.stream, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return classify(err, "ordered consumer on "+k.stream)
	}
	it, err := cons.Messages()
	if err != nil {
		return classify(err, "ordered consumer on "+k.stream)
	}
	defer it.Stop()
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return classify(err, "read "+k.stream)
		}
		meta, err := msg.Metadata()
		if err != nil {
			return fmt.Errorf("%w: %s: message without metadata: %v", ErrCorruptCommit, k.stream, err)
		}
		if err := fn(k.parse(msg.Subject(), msg.Data())); err != nil {
			return err
		}
		if once && meta.NumPending == 0 {
			return nil
		}
	}
}

func (k *KeyStream) parse(subject string, body []byte) KeyMsg {
	kind, digest, _ := strings.Cut(strings.TrimPrefix(subject, k.prefix), ".")
	return KeyMsg{Kind: kind, Digest: digest, Body: body}
}
