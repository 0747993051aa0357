package natsbus

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
)

// mirrorChunk bounds the asynchronous publishes awaited together.
const mirrorChunk = 256

// Mirror record headers (besides Nats-Msg-Id = the decimal log seq).
const (
	// HeaderSigner carries the public mirror key ("N…") that signed the record.
	HeaderSigner = "Hikoutei-Signer"
	// HeaderSignature carries the Ed25519 signature of the record
	// (base64url without padding) over SignContext followed by the record
	// bytes.
	HeaderSignature = "Hikoutei-Sig"
	// SignContext prefixes the signed bytes, so a mirror signature cannot
	// be replayed as a signature of anything else.
	SignContext = "hikoutei-mirror-v1\n"
	// HeaderChain carries the log's hash chain value after the record,
	// c(seq) in lowercase hex (events.RecordChainValue), on every record
	// that carries a link: the next record's link must equal it, and a
	// subscriber can compare it with a head published on chain.head.
	HeaderChain = "Hikoutei-Chain"
	// HeaderLost is carried by the first record after sequences the log
	// lost and never reuses (a salvage's holes, an accepted log gap; see
	// Bus.SetLogHoles): it names them ("A-B"), so a reader accepts the
	// jump in log seq at the next stream position and reports the hole.
	HeaderLost = "Hikoutei-Lost"
)

// SetLogHoles tells the mirror which sequences the log lost and never
// reuses: Mirror then accepts a jump over them, in a call and after the
// stream's tail, and marks the record after each with HeaderLost.
func (b *Bus) SetLogHoles(lost events.SeqRanges) {
	b.holes.Store(&lost)
}

// logHoles is what SetLogHoles set (empty: none).
func (b *Bus) logHoles() events.SeqRanges {
	if h := b.holes.Load(); h != nil {
		return *h
	}
	return nil
}

// lostRange is HeaderLost's value for the sequences a..b.
func lostRange(a, b uint64) string {
	var r events.SeqRanges
	r.AddRange(a, b)
	return r.String()
}

// MirrorRecord returns the mirrored form of a stamped event: its record
// (events.MarshalRecord) with the fencing token left out. The checksum is
// computed over the record as mirrored, so events.DecodeRecord verifies it
// and yields the event with an empty Token. The token never leaves the
// store.
func MirrorRecord(ev events.Event) ([]byte, error) {
	ev.Token = ""
	return events.MarshalRecord(ev)
}

// signedBytes is what a mirror signature covers.
func signedBytes(rec []byte) []byte {
	return append([]byte(SignContext), rec...)
}

// outRecord is one event ready to publish.
type outRecord struct {
	seq uint64
	msg *nats.Msg
}

// mirrorTail is what the publisher knows of its stream (mirrorMu held);
// it is reloaded from the stream after any failure.
type mirrorTail struct {
	ok     bool
	seq    uint64 // log seq of the stream's last record (0 = none)
	sseq   uint64 // the stream's last sequence
	data   []byte // the last record's bytes
	signer string // the last record's signer
}

// Mirror publishes each event's mirrored form (MirrorRecord: no fencing
// token; checksum and chain link included; signed with the store's mirror
// key, headers Hikoutei-Signer and Hikoutei-Sig; the chain value after it
// in Hikoutei-Chain) to the JetStream mirror stream
// (Config.Mirror), on the mirror subject with header Nats-Msg-Id = the
// event's global Seq in decimal, and waits for the stream's
// acknowledgements. The stream is created on first use when missing.
//
// The stream holds each log seq once, in order, at consecutive stream
// positions: Mirror resumes after the stream's last record (events up to
// it are skipped; the one equal to it must be byte-identical) and checks
// every acknowledgement. A duplicate acknowledgement for a record whose
// stored bytes differ (someone else published that Nats-Msg-Id first), an
// acknowledgement at another position than the next one, or a stream tail
// this log did not write fail with ErrMirrorForeignRecord naming the seq;
// the failure stays in MirrorHealth and Stats.MirrorFailure until a later
// call succeeds (which it cannot while the foreign record is the tail).
//
// Call it after the commit, off the commit path, in log order from one
// goroutine (calls are serialised), with dense seqs. It fails fast with
// ErrUnavailable when not connected and otherwise takes at most
// Config.Mirror.Timeout.
//
// Errors: ErrMirrorDisabled, ErrClosed, ErrUnavailable,
// ErrMirrorForeignRecord (*MirrorRecordError), ErrMirrorPublishFailed
// (also for an unstamped event with Seq 0, seqs that are not dense or
// would leave a gap after the stream's tail, a payload MarshalRecord
// rejects, or a stream that does not capture the mirror subject).
func (b *Bus) Mirror(evs []events.Event) (err error) {
	if !b.cfg.Mirror.Enabled {
		return ErrMirrorDisabled
	}
	if b.closed.Load() {
		return ErrClosed
	}
	if len(evs) == 0 {
		return nil
	}
	defer func() { b.setMirrorFail(err) }()
	recs, err := b.mirrorMsgs(evs)
	if err != nil {
		return err
	}
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	ctx, cancel, err := b.mirrorContext(len(evs), evs[0].Seq)
	if err != nil {
		return err
	}
	defer cancel()
	defer func() {
		if err != nil {
			b.streamOK, b.tail = false, mirrorTail{}
		}
	}()
	if err := b.loadTail(ctx); err != nil {
		return err
	}
	if recs, err = b.skipMirrored(recs); err != nil {
		return err
	}
	for start := 0; start < len(recs); start += mirrorChunk {
		if err := b.publishChunk(ctx, recs[start:min(start+mirrorChunk, len(recs))]); err != nil {
			return err
		}
	}
	return nil
}

// MirrorHead returns the log seq of the last record in the mirror stream
// (0 when the stream is empty), creating the stream when missing, so that
// a restarted store resumes there rather than reading its whole log.
// Errors: as Mirror.
func (b *Bus) MirrorHead() (seq uint64, err error) {
	if !b.cfg.Mirror.Enabled {
		return 0, ErrMirrorDisabled
	}
	if b.closed.Load() {
		return 0, ErrClosed
	}
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	ctx, cancel, err := b.mirrorContext(0, 0)
	if err != nil {
		return 0, err
	}
	defer cancel()
	if err := b.loadTail(ctx); err != nil {
		b.streamOK, b.tail = false, mirrorTail{}
		return 0, err
	}
	return b.tail.seq, nil
}

// MirroredHead returns the log seq of the last record the mirror stream is
// known to hold: acknowledged by a Mirror call, or read as the stream's
// tail (0 before either). It never waits on the network nor on a Mirror
// call under way (health reads it). A failure keeps the last value known.
func (b *Bus) MirroredHead() uint64 { return b.mirrored.Load() }

// MirrorHealth returns the last Mirror call's error, or nil when it
// succeeded (or Mirror was never called). Its stable code is
// Stats.MirrorFailure.
func (b *Bus) MirrorHealth() error {
	b.st.mirrorFailMu.Lock()
	defer b.st.mirrorFailMu.Unlock()
	return b.st.mirrorFail
}

func (b *Bus) setMirrorFail(err error) {
	b.st.mirrorFailMu.Lock()
	b.st.mirrorFail = err
	b.st.mirrorFailMu.Unlock()
}

// errorCode returns the stable code of a natsbus error ("" for nil).
func errorCode(err error) string {
	if err == nil {
		return ""
	}
	for _, s := range []error{ErrMirrorForeignRecord, ErrMirrorDisabled, ErrClosed, ErrUnavailable, ErrMirrorPublishFailed} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return ErrMirrorPublishFailed.Error()
}

// mirrorContext checks the connection and bounds one mirror operation.
func (b *Bus) mirrorContext(n int, from uint64) (context.Context, context.CancelFunc, error) {
	if !b.Connected() {
		return nil, nil, fmt.Errorf("%w: mirror of %d event(s) from seq %d", ErrUnavailable, n, from)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Mirror.Timeout)
	return ctx, cancel, nil
}

// mirrorMsgs builds the signed messages of dense, stamped events.
func (b *Bus) mirrorMsgs(evs []events.Event) ([]outRecord, error) {
	out := make([]outRecord, len(evs))
	holes := b.logHoles()
	for i, ev := range evs {
		if ev.Seq == 0 {
			return nil, fmt.Errorf("%w: event %d of %d has no seq (not stamped by the log)", ErrMirrorPublishFailed, i+1, len(evs))
		}
		jump := i > 0 && ev.Seq != evs[i-1].Seq+1
		if jump && (ev.Seq < evs[i-1].Seq || !holes.ContainsAll(evs[i-1].Seq+1, ev.Seq-1)) {
			return nil, fmt.Errorf("%w: seq %d follows seq %d (events must be dense, but for the log's holes)", ErrMirrorPublishFailed, ev.Seq, evs[i-1].Seq)
		}
		rec, err := MirrorRecord(ev)
		if err != nil {
			return nil, fmt.Errorf("%w: seq %d: %w", ErrMirrorPublishFailed, ev.Seq, err)
		}
		sig, err := b.signer.Sign(signedBytes(rec))
		if err != nil {
			return nil, fmt.Errorf("%w: seq %d: sign: %v", ErrMirrorPublishFailed, ev.Seq, err)
		}
		m := nats.NewMsg(b.cfg.Mirror.Subject)
		m.Header.Set(jetstream.MsgIDHeader, strconv.FormatUint(ev.Seq, 10))
		m.Header.Set(HeaderSigner, b.signerKey)
		m.Header.Set(HeaderSignature, base64.RawURLEncoding.EncodeToString(sig))
		if c, ok, err := events.RecordChainValue(rec); err == nil && ok {
			m.Header.Set(HeaderChain, c.String())
		}
		if jump {
			m.Header.Set(HeaderLost, lostRange(evs[i-1].Seq+1, ev.Seq-1))
		}
		m.Data = rec
		out[i] = outRecord{seq: ev.Seq, msg: m}
	}
	return out, nil
}

// loadTail reads the stream's last record (mirrorMu held). The stream's
// last message must be a record on the mirror subject.
func (b *Bus) loadTail(ctx context.Context) error {
	if err := b.ensureStream(ctx); err != nil || b.tail.ok {
		return err
	}
	mc := b.cfg.Mirror
	s, err := b.js.Stream(ctx, mc.Stream)
	if err != nil {
		return fmt.Errorf("%w: stream %q: %v", ErrMirrorPublishFailed, mc.Stream, err)
	}
	st := s.CachedInfo().State
	t := mirrorTail{ok: true, sseq: st.LastSeq}
	if st.Msgs > 0 {
		m, err := s.GetLastMsgForSubject(ctx, mc.Subject)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
			return b.foreign(st.LastSeq, 0, "the stream holds messages but none on the mirror subject")
		case err != nil:
			return fmt.Errorf("%w: stream %q last record: %v", ErrMirrorPublishFailed, mc.Stream, err)
		case m.Sequence != st.LastSeq:
			return b.foreign(st.LastSeq, 0, fmt.Sprintf("stream message %d follows this store's last record (message %d)", st.LastSeq, m.Sequence))
		}
		seq, perr := strconv.ParseUint(m.Header.Get(jetstream.MsgIDHeader), 10, 64)
		if perr != nil || seq == 0 {
			return b.foreign(m.Sequence, 0, "the stream's last message has no log seq in Nats-Msg-Id")
		}
		t.seq, t.data, t.signer = seq, m.Data, m.Header.Get(HeaderSigner)
	}
	b.tail = t
	b.mirrored.Store(t.seq)
	return nil
}

// skipMirrored drops the records the stream already holds; the one equal
// to the stream's tail must be byte-identical and signed by this store.
func (b *Bus) skipMirrored(recs []outRecord) ([]outRecord, error) {
	t := b.tail
	for i, r := range recs {
		switch {
		case r.seq < t.seq:
			continue
		case r.seq == t.seq:
			if !bytes.Equal(r.msg.Data, t.data) || t.signer != b.signerKey {
				return nil, b.foreign(t.sseq, t.seq, "the stream's record for this seq is not this log's (bytes or signer differ)")
			}
			continue
		case t.seq != 0 && r.seq != t.seq+1 && !b.logHoles().ContainsAll(t.seq+1, r.seq-1):
			return nil, fmt.Errorf("%w: stream %q ends at seq %d; publishing seq %d would leave a gap", ErrMirrorPublishFailed, b.cfg.Mirror.Stream, t.seq, r.seq)
		case t.seq != 0 && r.seq != t.seq+1:
			r.msg.Header.Set(HeaderLost, lostRange(t.seq+1, r.seq-1)) // the log lost them: the reader accepts the jump
		}
		return recs[i:], nil
	}
	return nil, nil
}

// publishChunk publishes records asynchronously and checks every
// acknowledgement in order.
func (b *Bus) publishChunk(ctx context.Context, recs []outRecord) error {
	futs := make([]jetstream.PubAckFuture, 0, len(recs))
	for _, r := range recs {
		f, err := b.js.PublishMsgAsync(r.msg, jetstream.WithExpectStream(b.cfg.Mirror.Stream))
		if err != nil {
			return fmt.Errorf("%w: seq %d: %v", ErrMirrorPublishFailed, r.seq, err)
		}
		futs = append(futs, f)
	}
	for i, f := range futs {
		select {
		case ack := <-f.Ok():
			if err := b.settle(ctx, recs[i], ack); err != nil {
				return err
			}
		case err := <-f.Err():
			return fmt.Errorf("%w: seq %d: %v", ErrMirrorPublishFailed, recs[i].seq, err)
		case <-ctx.Done():
			return fmt.Errorf("%w: seq %d: no acknowledgement within %s", ErrMirrorPublishFailed, recs[i].seq, b.cfg.Mirror.Timeout)
		}
	}
	return nil
}

// settle checks one acknowledgement against the stream's expected next
// position and moves the tail.
func (b *Bus) settle(ctx context.Context, r outRecord, ack *jetstream.PubAck) error {
	if ack.Duplicate {
		same, err := b.storedIs(ctx, ack.Sequence, r)
		if err != nil {
			return err
		}
		if !same {
			return b.foreign(ack.Sequence, r.seq, "duplicate acknowledgement: the stream already holds another record with this Nats-Msg-Id (published by someone else)")
		}
		b.st.mirrorDuplicates.Add(1)
		b.tail.seq, b.tail.data, b.tail.signer = r.seq, r.msg.Data, b.signerKey
		b.tail.sseq = max(b.tail.sseq, ack.Sequence)
		b.mirrored.Store(r.seq)
		return nil
	}
	if want := b.tail.sseq + 1; ack.Sequence != want {
		return b.foreign(ack.Sequence, r.seq, fmt.Sprintf("stored at stream message %d, expected %d: another client wrote to the stream", ack.Sequence, want))
	}
	b.tail.seq, b.tail.sseq, b.tail.data, b.tail.signer = r.seq, ack.Sequence, r.msg.Data, b.signerKey
	b.st.mirrored.Add(1)
	b.mirrored.Store(r.seq)
	return nil
}

// storedIs reports whether stream message sseq holds exactly r.
func (b *Bus) storedIs(ctx context.Context, sseq uint64, r outRecord) (bool, error) {
	s, err := b.js.Stream(ctx, b.cfg.Mirror.Stream)
	if err != nil {
		return false, fmt.Errorf("%w: stream %q: %v", ErrMirrorPublishFailed, b.cfg.Mirror.Stream, err)
	}
	m, err := s.GetMsg(ctx, sseq)
	if err != nil {
		return false, fmt.Errorf("%w: stream %q message %d: %v", ErrMirrorPublishFailed, b.cfg.Mirror.Stream, sseq, err)
	}
	return bytes.Equal(m.Data, r.msg.Data) && m.Header.Get(HeaderSigner) == b.signerKey &&
		m.Header.Get(HeaderSignature) == r.msg.Header.Get(HeaderSignature), nil
}

// foreign counts and returns an ErrMirrorForeignRecord.
func (b *Bus) foreign(sseq, seq uint64, reason string) error {
	b.st.mirrorForeign.Add(1)
	return &MirrorRecordError{Stream: b.cfg.Mirror.Stream, StreamSeq: sseq, Seq: seq, Reason: reason, Err: ErrMirrorForeignRecord}
}

// ensureStream creates the mirror stream when missing (mirrorMu held).
func (b *Bus) ensureStream(ctx context.Context) error {
	if b.streamOK {
		return nil
	}
	b.tail = mirrorTail{}
	mc := b.cfg.Mirror
	if b.js == nil {
		js, err := jetstream.New(b.nc)
		if err != nil {
			return fmt.Errorf("%w: jetstream: %v", ErrMirrorPublishFailed, err)
		}
		b.js = js
	}
	s, err := b.js.Stream(ctx, mc.Stream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		storage := jetstream.FileStorage
		if mc.Memory {
			storage = jetstream.MemoryStorage
		}
		_, err = b.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:        mc.Stream,
			Description: "hikoutei committed events of store " + b.cfg.Store + " (signed records without fencing token; Nats-Msg-Id = log seq)",
			Subjects:    streamSubjects(b.cfg),
			Retention:   jetstream.LimitsPolicy,
			Storage:     storage,
			Replicas:    mc.Replicas,
			Duplicates:  mc.DuplicateWindow,
			MaxAge:      mc.MaxAge,
			MaxBytes:    orUnlimited(mc.MaxBytes),
			Discard:     jetstream.DiscardOld,
		})
		if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("%w: create stream %q: %v", ErrMirrorPublishFailed, mc.Stream, err)
		}
	case err != nil:
		return fmt.Errorf("%w: stream %q: %v", ErrMirrorPublishFailed, mc.Stream, err)
	default:
		subs := s.CachedInfo().Config.Subjects
		if !slices.ContainsFunc(subs, func(p string) bool { return subjectMatches(p, mc.Subject) }) {
			return fmt.Errorf("%w: existing stream %q captures %v, not %q", ErrMirrorPublishFailed, mc.Stream, subs, mc.Subject)
		}
		if err := b.guardStream(ctx, s); err != nil {
			return err
		}
	}
	b.streamOK = true
	return nil
}

// notStored is the Nats-Expected-Stream header of the store's own
// notifications on an embedded server: it names no stream, so the mirror
// stream, whose subjects guard the store's subjects (streamSubjects), does
// not store them; subscribers get them as ever.
const notStored = "hikoutei-notification-not-stored"

// guardsSubjects reports whether the mirror stream guards the store's
// subjects: the embedded server, where the listener's clients may create
// consumers on the stream (clientPermissions) but the store alone
// publishes its subjects.
func guardsSubjects(cfg Config) bool { return cfg.URL == "" && cfg.Mirror.Enabled }

// streamSubjects are the mirror stream's subjects. On an external server:
// the mirror subject. On the embedded one, also every subject of the store
// a client may not publish — each single token after "hikoutei.<store>."
// (events included), chain.* and conflict.*, and anything of three tokens
// or more — so that nats-server refuses a push consumer delivering into
// them ("consumer deliver subject forms a cycle"): a reader cannot make
// the server publish the mirror's records on chain.head or
// conflict.opened. Only the store's records are stored there: the store
// publishes its notifications with a Nats-Expected-Stream header no stream
// has (notStored), and clients may publish only wake.* (two tokens, not
// guarded: delivering there adds nothing a client cannot publish itself).
func streamSubjects(cfg Config) []string {
	if !guardsSubjects(cfg) {
		return []string{cfg.Mirror.Subject}
	}
	p := SubjectPrefix + "." + cfg.Store + "."
	out := []string{p + "*", p + "chain.*", p + "conflict.*", p + "*.*.>"}
	if !slices.ContainsFunc(out, func(g string) bool { return subjectMatches(g, cfg.Mirror.Subject) }) {
		out = append(out, cfg.Mirror.Subject)
	}
	return out
}

// guardStream gives an existing mirror stream the subjects that guard the
// store's (streamSubjects), e.g. a stream an earlier version created with
// the mirror subject alone (mirrorMu held).
func (b *Bus) guardStream(ctx context.Context, s jetstream.Stream) error {
	if !guardsSubjects(b.cfg) {
		return nil
	}
	c := s.CachedInfo().Config
	want := streamSubjects(b.cfg)
	if slices.Equal(c.Subjects, want) {
		return nil
	}
	c.Subjects = want
	if _, err := b.js.UpdateStream(ctx, c); err != nil {
		return fmt.Errorf("%w: guard the subjects of stream %q: %v", ErrMirrorPublishFailed, b.cfg.Mirror.Stream, err)
	}
	return nil
}

func orUnlimited(n int64) int64 {
	if n == 0 {
		return -1
	}
	return n
}

// subjectMatches reports whether the literal subject s matches pattern p
// (NATS wildcards '*' and '>').
func subjectMatches(p, s string) bool {
	pt, st := strings.Split(p, "."), strings.Split(s, ".")
	for i, tok := range pt {
		if tok == ">" {
			return len(st) > i
		}
		if i >= len(st) || (tok != "*" && tok != st[i]) {
			return false
		}
	}
	return len(pt) == len(st)
}
