package natsbus

import (
	"context"
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

// Mirror publishes each event's record bytes (events.MarshalRecord, checksum
// included) to the JetStream mirror stream (Config.Mirror), on the mirror
// subject with header Nats-Msg-Id = the event's global Seq in decimal, and
// waits for the stream's acknowledgements. Re-publishing events (e.g. the
// tail after a restart) inside the stream's duplicate window stores nothing
// new. The stream is created on first use when missing.
//
// Call it after the commit, off the commit path, in log order from one
// goroutine (calls are serialised; ReadMirror expects stream order = seq
// order). It fails fast with ErrUnavailable when not connected and
// otherwise takes at most Config.Mirror.Timeout.
//
// Errors: ErrMirrorDisabled, ErrClosed, ErrUnavailable,
// ErrMirrorPublishFailed (also for an unstamped event with Seq 0, or a
// payload MarshalRecord rejects, or a stream that does not capture the
// mirror subject).
func (b *Bus) Mirror(evs []events.Event) error {
	if !b.cfg.Mirror.Enabled {
		return ErrMirrorDisabled
	}
	if b.closed.Load() {
		return ErrClosed
	}
	if len(evs) == 0 {
		return nil
	}
	msgs := make([]*nats.Msg, len(evs))
	for i, ev := range evs {
		if ev.Seq == 0 {
			return fmt.Errorf("%w: event %d of %d has no seq (not stamped by the log)", ErrMirrorPublishFailed, i+1, len(evs))
		}
		rec, err := events.MarshalRecord(ev)
		if err != nil {
			return fmt.Errorf("%w: seq %d: %w", ErrMirrorPublishFailed, ev.Seq, err)
		}
		m := nats.NewMsg(b.cfg.Mirror.Subject)
		m.Header.Set(jetstream.MsgIDHeader, strconv.FormatUint(ev.Seq, 10))
		m.Data = rec
		msgs[i] = m
	}
	b.mirrorMu.Lock()
	defer b.mirrorMu.Unlock()
	if !b.Connected() {
		return fmt.Errorf("%w: mirror of %d event(s) from seq %d", ErrUnavailable, len(evs), evs[0].Seq)
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.Mirror.Timeout)
	defer cancel()
	if err := b.ensureStream(ctx); err != nil {
		return err
	}
	for start := 0; start < len(msgs); start += mirrorChunk {
		end := min(start+mirrorChunk, len(msgs))
		futs := make([]jetstream.PubAckFuture, 0, end-start)
		for _, m := range msgs[start:end] {
			f, err := b.js.PublishMsgAsync(m, jetstream.WithExpectStream(b.cfg.Mirror.Stream))
			if err != nil {
				return fmt.Errorf("%w: seq %s: %v", ErrMirrorPublishFailed, m.Header.Get(jetstream.MsgIDHeader), err)
			}
			futs = append(futs, f)
		}
		for _, f := range futs {
			select {
			case ack := <-f.Ok():
				if ack.Duplicate {
					b.st.mirrorDuplicates.Add(1)
				} else {
					b.st.mirrored.Add(1)
				}
			case err := <-f.Err():
				return fmt.Errorf("%w: seq %s: %v", ErrMirrorPublishFailed, f.Msg().Header.Get(jetstream.MsgIDHeader), err)
			case <-ctx.Done():
				return fmt.Errorf("%w: seq %s: no acknowledgement within %s", ErrMirrorPublishFailed, f.Msg().Header.Get(jetstream.MsgIDHeader), b.cfg.Mirror.Timeout)
			}
		}
	}
	return nil
}

// ensureStream creates the mirror stream when missing (mirrorMu held).
func (b *Bus) ensureStream(ctx context.Context) error {
	if b.streamOK {
		return nil
	}
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
			Description: "hikoutei committed events of store " + b.cfg.Store + " (events.MarshalRecord; Nats-Msg-Id = log seq)",
			Subjects:    []string{mc.Subject},
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
	}
	b.streamOK = true
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

// ReadMirror reads the JetStream mirror stream named stream on the server
// at url (comma-separated URLs allowed) from its first message to the last
// one present when the read starts, in stream order, and calls fn for each
// event after verifying it: the log seq comes from the Nats-Msg-Id header
// and events.DecodeRecord checks the record's checksum and that the record
// claims that seq. It is what `hikoutei audit --nats URL --stream S` runs.
// See ReadMirrorWith for credentials and TLS.
//
// Delivered events have strictly increasing Seq: a message whose seq is not
// above the last delivered one (a re-publish outside the duplicate window)
// is verified and skipped. The first seq may be above 1 (a mirror started
// later or trimmed by limits). Holes in the sequence do not stop the read;
// they are reported at the end as *MirrorGapError.
//
// Errors: the first error fn returns (as is); ErrConfigInvalid;
// ErrMirrorReadFailed (connect, stream lookup, consume, ctx expiry);
// ErrMirrorCorrupt (bad header; a bad record also matches
// events.ErrCorruptRecord); *MirrorGapError (ErrMirrorGap).
func ReadMirror(ctx context.Context, url, stream string, fn func(events.Event) error) error {
	return ReadMirrorWith(ctx, Config{URL: url}, stream, fn)
}

// ReadMirrorWith is ReadMirror with the connection settings of cfg: URL
// (required), CredsFile, TLSCAFile, TLSCertFile/TLSKeyFile, Name,
// ConnectTimeout. Other fields (Store included) are ignored. The connection
// does not reconnect: a connection loss fails the read.
func ReadMirrorWith(ctx context.Context, cfg Config, stream string, fn func(events.Event) error) error {
	if cfg.URL == "" {
		return fmt.Errorf("%w: ReadMirror needs a server URL", ErrConfigInvalid)
	}
	if !validStreamName(stream) {
		return fmt.Errorf("%w: stream name %q", ErrConfigInvalid, stream)
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return fmt.Errorf("%w: TLSCertFile and TLSKeyFile go together", ErrConfigInvalid)
	}
	if cfg.Name == "" {
		cfg.Name = "hikoutei-audit"
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	opts := []nats.Option{nats.Name(cfg.Name), nats.Timeout(cfg.ConnectTimeout), nats.NoReconnect()}
	if cfg.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(cfg.CredsFile))
	}
	if cfg.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCAFile))
	}
	if cfg.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCertFile, cfg.TLSKeyFile))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return fmt.Errorf("%w: connect %s: %v", ErrMirrorReadFailed, redact(cfg.URL), err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("%w: jetstream: %v", ErrMirrorReadFailed, err)
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("%w: stream %q: %v", ErrMirrorReadFailed, stream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("%w: stream %q info: %v", ErrMirrorReadFailed, stream, err)
	}
	end := info.State.LastSeq
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("%w: stream %q consumer: %v", ErrMirrorReadFailed, stream, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("%w: stream %q consume: %v", ErrMirrorReadFailed, stream, err)
	}
	defer it.Stop()

	var last uint64
	var gap *MirrorGapError
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return fmt.Errorf("%w: stream %q after seq %d: %v", ErrMirrorReadFailed, stream, last, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("%w: stream %q: message metadata: %v", ErrMirrorReadFailed, stream, err)
		}
		sseq := md.Sequence.Stream
		id := m.Headers().Get(jetstream.MsgIDHeader)
		seq, perr := strconv.ParseUint(id, 10, 64)
		if perr != nil || seq == 0 {
			return fmt.Errorf("%w: stream %q message %d: Nats-Msg-Id %q is not a log seq", ErrMirrorCorrupt, stream, sseq, id)
		}
		ev, err := events.DecodeRecord(seq, m.Data())
		if err != nil {
			return fmt.Errorf("%w: stream %q message %d: %w", ErrMirrorCorrupt, stream, sseq, err)
		}
		if seq > last {
			if last != 0 && seq != last+1 {
				if gap == nil {
					gap = &MirrorGapError{Stream: stream, After: last, Next: seq}
				}
				gap.Gaps++
			}
			last = seq
			if err := fn(ev); err != nil {
				return err
			}
		}
		if sseq >= end || md.NumPending == 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: stream %q after seq %d: %v", ErrMirrorReadFailed, stream, last, err)
		}
	}
	if gap != nil {
		return gap
	}
	return nil
}
