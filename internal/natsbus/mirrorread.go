package natsbus

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/hikoutei/hikoutei-go/events"
)

// MirrorReport summarises a verified read of a mirror stream.
type MirrorReport struct {
	// Signer is the mirror key every record was verified against ("" when
	// the stream was empty).
	Signer string
	// Pinned reports that Signer was given (MirrorConfig.VerifyKey) rather
	// than taken from the first record.
	Pinned bool
	// First and Last are the log seqs of the first and last records
	// verified (0 when none); Records counts them.
	First, Last uint64
	Records     int
	// ChainSeq and Chain are the last record verified against the log's
	// hash chain and the chain value after it (0 and zero when no record
	// carries a link): the head a subscriber compares with a pin.
	ChainSeq uint64
	Chain    events.ChainHash
	// Holes are the sequences the log lost and the stream skipped at
	// consecutive positions, as the record after each named them
	// (HeaderLost): not records of the log, so no gap.
	Holes events.SeqRanges
}

// ReadMirror reads the JetStream mirror stream named stream on the server
// at url (comma-separated URLs allowed) from its first message to the last
// one present when the read starts, in stream order, and calls fn for each
// event after verifying it. It is what `hikoutei audit --nats URL --stream
// S` runs. See ReadMirrorWith for credentials, TLS and pinning the key,
// and ReadMirrorReport for what was verified.
//
// Every message must be a record of this store, in sequence:
//   - its Nats-Msg-Id is its log seq, and events.DecodeRecord checks the
//     record's checksum and that the record claims that seq;
//   - it is signed (Hikoutei-Signer, Hikoutei-Sig) by the mirror key: the
//     pinned MirrorConfig.VerifyKey, else the key of the first record;
//   - its log seq is the previous one + 1 at the next stream position: the
//     difference between stream position and log seq stays what the first
//     record set. A record whose seq is not above the previous one
//     (duplicated, out of order) or that sits at another position than the
//     mapping gives is refused, except a record at the next position whose
//     Hikoutei-Lost header names exactly the sequences it skips: the log
//     lost them (a salvage, an accepted log gap), and the report lists them
//     (MirrorReport.Holes);
//   - a record that carries a hash chain link (record format 3) continues
//     the chain of the record before it (its link is that record's chain
//     value) and its Hikoutei-Chain header is its own chain value; the
//     chain is taken up from the link of the first such record, and again
//     after a hole or a record written before the chain.
//
// The first seq may be above 1 (a mirror started later or trimmed by
// limits). Stream messages deleted in the middle (both the position and
// the seq jump alike) do not stop the read; the holes are reported at the
// end as *MirrorGapError.
//
// Errors: the first error fn returns (as is); ErrConfigInvalid;
// ErrMirrorReadFailed (connect, stream lookup, consume, ctx expiry);
// *MirrorRecordError naming the stream message and log seq, wrapping
// ErrMirrorCorrupt (bad header; a bad record also matches
// events.ErrCorruptRecord), ErrMirrorForged, ErrMirrorSequence or
// events.ErrChainBroken;
// *MirrorGapError (ErrMirrorGap).
func ReadMirror(ctx context.Context, url, stream string, fn func(events.Event) error) error {
	return ReadMirrorWith(ctx, Config{URL: url}, stream, fn)
}

// ReadMirrorWith is ReadMirror with the connection settings of cfg: URL
// (required), CredsFile, NkeyFile, TLSCAFile, TLSCertFile/TLSKeyFile,
// Name, ConnectTimeout, and Mirror.VerifyKey (the key to pin). Other
// fields (Store included) are ignored. The connection does not reconnect:
// a connection loss fails the read.
func ReadMirrorWith(ctx context.Context, cfg Config, stream string, fn func(events.Event) error) error {
	_, err := ReadMirrorReport(ctx, cfg, stream, fn)
	return err
}

// ReadMirrorReport is ReadMirrorWith that also reports what it verified:
// the signer, whether it was pinned, and the seqs delivered. Errors: as
// ReadMirror.
func ReadMirrorReport(ctx context.Context, cfg Config, stream string, fn func(events.Event) error) (MirrorReport, error) {
	v := &chainVerifier{stream: stream}
	if err := v.pin(cfg.Mirror.VerifyKey); err != nil {
		return MirrorReport{}, err
	}
	nc, err := readerConn(cfg, stream)
	if err != nil {
		return MirrorReport{}, err
	}
	defer nc.Close()
	values := events.NewValueResolver() // effect.queued values kept once, in their entity.persisted
	err = consumeMirror(ctx, nc, stream, func(sseq uint64, m jetstream.Msg) error {
		ev, err := v.check(sseq, m.Headers(), m.Data())
		if err != nil {
			return err
		}
		if err := values.Resolve(&ev); err != nil {
			return err
		}
		return fn(ev)
	})
	if err == nil && v.gap != nil {
		err = v.gap
	}
	return v.report(), err
}

// readerConn connects a non-reconnecting reader.
func readerConn(cfg Config, stream string) (*nats.Conn, error) {
	if cfg.URL == "" {
		return nil, fmt.Errorf("%w: ReadMirror needs a server URL", ErrConfigInvalid)
	}
	if !validStreamName(stream) {
		return nil, fmt.Errorf("%w: stream name %q", ErrConfigInvalid, stream)
	}
	if (cfg.TLSCertFile == "") != (cfg.TLSKeyFile == "") {
		return nil, fmt.Errorf("%w: TLSCertFile and TLSKeyFile go together", ErrConfigInvalid)
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
	if cfg.NkeyFile != "" {
		o, err := nats.NkeyOptionFromSeed(cfg.NkeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: NkeyFile %s: not a user nkey seed", ErrConfigInvalid, cfg.NkeyFile)
		}
		opts = append(opts, o)
	}
	if cfg.TLSCAFile != "" {
		opts = append(opts, nats.RootCAs(cfg.TLSCAFile))
	}
	if cfg.TLSCertFile != "" {
		opts = append(opts, nats.ClientCert(cfg.TLSCertFile, cfg.TLSKeyFile))
	}
	nc, err := nats.Connect(cfg.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: connect %s: %v", ErrMirrorReadFailed, redact(cfg.URL), err)
	}
	return nc, nil
}

// consumeMirror calls fn for every message of stream present when it
// starts, in stream order.
func consumeMirror(ctx context.Context, nc *nats.Conn, stream string, fn func(sseq uint64, m jetstream.Msg) error) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("%w: jetstream: %v", ErrMirrorReadFailed, err)
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("%w: stream %q: %v", ErrMirrorReadFailed, stream, err)
	}
	info := s.CachedInfo()
	if info.State.Msgs == 0 {
		return nil
	}
	end := info.State.LastSeq
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
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return fmt.Errorf("%w: stream %q after message %d: %v", ErrMirrorReadFailed, stream, last, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("%w: stream %q: message metadata: %v", ErrMirrorReadFailed, stream, err)
		}
		last = md.Sequence.Stream
		if err := fn(last, m); err != nil {
			return err
		}
		if last >= end || md.NumPending == 0 {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w: stream %q after message %d: %v", ErrMirrorReadFailed, stream, last, err)
		}
	}
}

// chainVerifier checks mirrored records one by one, in stream order.
type chainVerifier struct {
	stream string
	key    string        // the mirror key (pinned, or adopted from the first record)
	kp     nkeys.KeyPair // its public key pair
	pinned bool
	first  uint64 // first log seq delivered
	last   uint64 // last log seq delivered
	n      int
	offset int64 // stream position minus log seq, set by the first record (and moved by a log hole)
	// lastSSeq is the stream position of the last record; holes are the
	// sequences the log lost that the stream skipped (HeaderLost).
	lastSSeq uint64
	holes    events.SeqRanges
	gap      *MirrorGapError
	// chain is the hash chain value after the last record (known when
	// chainSeq is that record's seq).
	chain    events.ChainHash
	chainSeq uint64
}

// pin fixes the mirror key ("" = adopt the first record's).
func (v *chainVerifier) pin(key string) error {
	if key == "" {
		return nil
	}
	kp, err := nkeys.FromPublicKey(key)
	if err != nil || !nkeys.IsValidPublicServerKey(key) {
		return fmt.Errorf("%w: mirror key %q is not a public mirror key (N…)", ErrConfigInvalid, key)
	}
	v.key, v.kp, v.pinned = key, kp, true
	return nil
}

// check verifies the message at stream position sseq and returns its event.
func (v *chainVerifier) check(sseq uint64, h nats.Header, data []byte) (events.Event, error) {
	id := h.Get(jetstream.MsgIDHeader)
	seq, perr := strconv.ParseUint(id, 10, 64)
	if perr != nil || seq == 0 {
		return events.Event{}, v.fail(ErrMirrorCorrupt, sseq, 0, fmt.Sprintf("Nats-Msg-Id %q is not a log seq", id), nil)
	}
	ev, err := events.DecodeRecord(seq, data)
	if err != nil {
		return events.Event{}, v.fail(ErrMirrorCorrupt, sseq, seq, "record does not decode", err)
	}
	if err := v.checkSignature(sseq, seq, h, data); err != nil {
		return events.Event{}, err
	}
	if err := v.checkChain(sseq, seq, ev, h, data); err != nil {
		return events.Event{}, err
	}
	if err := v.checkSequence(sseq, seq, h.Get(HeaderLost)); err != nil {
		return events.Event{}, err
	}
	return ev, nil
}

// checkChain checks a chained record's link against the record before it
// (when that one's chain value is known) and its Hikoutei-Chain header.
func (v *chainVerifier) checkChain(sseq, seq uint64, ev events.Event, h nats.Header, data []byte) error {
	c, ok, err := events.RecordChainValue(data)
	if err != nil || !ok {
		return err
	}
	if v.chainSeq != 0 && v.chainSeq+1 == seq && ev.Link != v.chain {
		return v.fail(events.ErrChainBroken, sseq, seq, "its link is not the chain value of the record before it", nil)
	}
	if hc := h.Get(HeaderChain); hc != "" && hc != c.String() {
		return v.fail(events.ErrChainBroken, sseq, seq, "its Hikoutei-Chain header is not its chain value", nil)
	}
	v.chain, v.chainSeq = c, seq
	return nil
}

func (v *chainVerifier) checkSignature(sseq, seq uint64, h nats.Header, data []byte) error {
	signer, sig := h.Get(HeaderSigner), h.Get(HeaderSignature)
	if signer == "" || sig == "" {
		return v.fail(ErrMirrorForged, sseq, seq, "record is not signed", nil)
	}
	if v.key == "" {
		if err := v.pin(signer); err != nil {
			return v.fail(ErrMirrorForged, sseq, seq, "signer is not a mirror key", nil)
		}
		v.pinned = false
	}
	if signer != v.key {
		return v.fail(ErrMirrorForged, sseq, seq, fmt.Sprintf("signed by %s, not by the mirror key %s", signer, v.key), nil)
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || v.kp.Verify(signedBytes(data), raw) != nil {
		return v.fail(ErrMirrorForged, sseq, seq, "signature does not verify", nil)
	}
	return nil
}

func (v *chainVerifier) checkSequence(sseq, seq uint64, lost string) error {
	diff := int64(sseq) - int64(seq)
	if v.n == 0 {
		v.offset, v.first = diff, seq
	} else {
		switch {
		case seq <= v.last:
			return v.fail(ErrMirrorSequence, sseq, seq, fmt.Sprintf("follows log seq %d: duplicated or out of order", v.last), nil)
		case lost != "" && lost == lostRange(v.last+1, seq-1) && sseq == v.lastSSeq+1:
			// The log lost these sequences (a salvage, an accepted gap):
			// the store skipped them at the next position, and said so.
			v.holes.AddRange(v.last+1, seq-1)
			v.offset = diff
		case diff != v.offset:
			return v.fail(ErrMirrorSequence, sseq, seq, fmt.Sprintf("the stream's mapping puts log seq %d at this position", int64(sseq)-v.offset), nil)
		case seq != v.last+1:
			if v.gap == nil {
				v.gap = &MirrorGapError{Stream: v.stream, After: v.last, Next: seq}
			}
			v.gap.Gaps++
		}
	}
	v.last, v.lastSSeq = seq, sseq
	v.n++
	return nil
}

func (v *chainVerifier) fail(sentinel error, sseq, seq uint64, reason string, cause error) error {
	return &MirrorRecordError{Stream: v.stream, StreamSeq: sseq, Seq: seq, Reason: reason, Err: sentinel, Cause: cause}
}

func (v *chainVerifier) report() MirrorReport {
	return MirrorReport{Signer: v.key, Pinned: v.pinned, First: v.first, Last: v.last, Records: v.n, ChainSeq: v.chainSeq, Chain: v.chain,
		Holes: v.holes}
}
