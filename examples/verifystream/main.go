// Command verifystream is an auditor's independent check of a store's
// NATS event mirror: it reads the JetStream stream with nats.go alone,
// parses each record from the layout docs/events.md gives, recomputes the
// hash chain with crypto/sha256 (every record's link must be the chain
// value of the record before it, and its Hikoutei-Chain header its own),
// checks the Ed25519 signature with nkeys, and prints the head. It uses no
// Hikoutei package.
//
//	go run ./examples/verifystream -nats nats://host:4222 -nkey nats-client.nk \
//	    -stream HIKOUTEI_DEMO [-store demo] [-key N…] [-pin SEQ:HASH]
//
// With -store (the store id) a stream that starts at seq 1 is checked from
// the genesis value; otherwise its first record's link is taken as given
// and a pin anchors it. It exits 1 naming the first message that does not
// hold, or a pin the stream does not extend.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
)

// record is what the chain needs of one mirrored record.
type record struct {
	seq    uint64
	link   []byte // nil: a record written before the chain
	fields []byte // the chain form: the envelope and payload without token
}

// checker carries the chain from one message to the next.
type checker struct {
	store, key string
	seq        uint64 // the last record's seq (0: none yet)
	chain      []byte // the chain value after it (nil: unknown)
	pinSeq     uint64
	pin        []byte
	pinned     bool
	records    int
}

func main() {
	url := flag.String("nats", nats.DefaultURL, "the NATS server")
	seed := flag.String("nkey", "", "a user nkey seed file to authenticate with (e.g. the store's nats-client.nk)")
	stream := flag.String("stream", "", "the mirror stream, HIKOUTEI_<STORE>")
	store := flag.String("store", "", "the store id: check a stream that starts at seq 1 from the genesis value")
	key := flag.String("key", "", "the store's mirror key (N…); default: the first record's signer")
	pin := flag.String("pin", "", "a head kept earlier, SEQ:HASH, that the stream must extend")
	flag.Parse()
	c := &checker{store: *store, key: *key}
	err := c.parsePin(*pin)
	if err == nil {
		err = c.run(*url, *seed, *stream)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "verifystream:", err)
		os.Exit(1)
	}
	fmt.Printf("verified %d records\nhead %d:%x\n", c.records, c.seq, c.chain)
}

// run reads every message the stream holds now, in order, and checks it.
func (c *checker) run(url, seed, stream string) error {
	opts := []nats.Option{nats.Name("verifystream"), nats.NoReconnect()}
	if seed != "" {
		o, err := nats.NkeyOptionFromSeed(seed)
		if err != nil {
			return err
		}
		opts = append(opts, o)
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("stream %s: %w", stream, err)
	}
	if s.CachedInfo().State.Msgs > 0 {
		if err := c.consume(ctx, s, s.CachedInfo().State.LastSeq); err != nil {
			return err
		}
	}
	if c.pin != nil && !c.pinned {
		return fmt.Errorf("the stream does not extend the pinned head %d:%x", c.pinSeq, c.pin)
	}
	return nil
}

// consume checks the messages up to stream position end.
func (c *checker) consume(ctx context.Context, s jetstream.Stream, end uint64) error {
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return err
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		m, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return err
		}
		md, err := m.Metadata()
		if err != nil {
			return err
		}
		if err := c.check(m.Headers(), m.Data()); err != nil {
			return fmt.Errorf("stream message %d: %w", md.Sequence.Stream, err)
		}
		if md.Sequence.Stream >= end {
			return nil
		}
	}
}

// check verifies one message: checksum, sequence, link, the
// Hikoutei-Chain header and the signature.
func (c *checker) check(h nats.Header, data []byte) error {
	r, err := parse(data)
	if err != nil {
		return err
	}
	if c.records > 0 && r.seq != c.seq+1 {
		return fmt.Errorf("record seq %d follows seq %d", r.seq, c.seq)
	}
	if c.records == 0 && r.seq == 1 && c.store != "" {
		g := sha256.Sum256([]byte("hikoutei-chain-v1\n" + c.store))
		c.chain = g[:]
	}
	switch {
	case r.link != nil && c.chain != nil && !bytes.Equal(r.link, c.chain):
		return fmt.Errorf("seq %d: its link is not the chain value of the record before it", r.seq)
	case r.link != nil:
		c.chain = r.link
	}
	if c.chain != nil {
		next := sha256.Sum256(append(append([]byte(nil), c.chain...), r.fields...))
		c.chain = next[:]
	}
	if hc := h.Get("Hikoutei-Chain"); hc != "" && hc != hex.EncodeToString(c.chain) {
		return fmt.Errorf("seq %d: its Hikoutei-Chain header is not its chain value", r.seq)
	}
	if err := c.checkSignature(h, data); err != nil {
		return fmt.Errorf("seq %d: %w", r.seq, err)
	}
	c.seq, c.records = r.seq, c.records+1
	c.pinned = c.pinned || r.seq == c.pinSeq && bytes.Equal(c.chain, c.pin)
	return nil
}

// checkSignature checks the Ed25519 signature over "hikoutei-mirror-v1\n"
// and the record, by the pinned key or the first record's signer.
func (c *checker) checkSignature(h nats.Header, data []byte) error {
	signer := h.Get("Hikoutei-Signer")
	if c.key == "" {
		c.key = signer
	}
	if signer != c.key {
		return fmt.Errorf("signed by %s, not the mirror key %s", signer, c.key)
	}
	kp, err := nkeys.FromPublicKey(signer)
	if err != nil {
		return fmt.Errorf("signer: %w", err)
	}
	sig, err := base64.RawURLEncoding.DecodeString(h.Get("Hikoutei-Sig"))
	if err != nil || kp.Verify(append([]byte("hikoutei-mirror-v1\n"), data...), sig) != nil {
		return errors.New("the signature does not verify")
	}
	return nil
}

// parse checks a record's checksum and returns its seq, link and chain
// form: [3, link(32)] then format 1 or 2: seq, version, schema, epoch
// (uvarint), at (varint), stream, type, token, commit, payload (uvarint
// length + bytes); then the xxhash64 of all of it, little endian.
func parse(b []byte) (record, error) {
	if len(b) < 9 || binary.LittleEndian.Uint64(b[len(b)-8:]) != xxhash.Sum64(b[:len(b)-8]) {
		return record{}, errors.New("the record fails its checksum")
	}
	body := b[:len(b)-8]
	var r record
	if body[0] == 3 && len(body) > 33 {
		r.link, body = body[1:33], body[33:]
	}
	if body[0] != 1 && body[0] != 2 {
		return record{}, fmt.Errorf("unknown record format %d", body[0])
	}
	rest := body[1:]
	r.seq, _ = binary.Uvarint(rest)
	for i := range 10 { // 4 uvarints, the varint time, 5 length-prefixed fields
		n, size := fieldLen(i, rest)
		if size <= 0 || n > len(rest) {
			return record{}, errors.New("the record does not parse")
		}
		if i != 7 { // the fencing token is outside the chain
			r.fields = append(r.fields, rest[:n]...)
		}
		rest = rest[n:]
	}
	return r, nil
}

// fieldLen is the byte length of field i at the start of b, and how many
// bytes its length or value took (<= 0: malformed).
func fieldLen(i int, b []byte) (int, int) {
	if i < 5 {
		_, n := binary.Uvarint(b)
		return n, n
	}
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)) {
		return 0, -1
	}
	return n + int(l), n
}

func (c *checker) parsePin(s string) error {
	if s == "" {
		return nil
	}
	seq, hash, ok := strings.Cut(s, ":")
	n, err := strconv.ParseUint(seq, 10, 64)
	h, herr := hex.DecodeString(hash)
	if !ok || err != nil || herr != nil || len(h) != sha256.Size {
		return fmt.Errorf("-pin %q: want SEQ:HASH (64 hex digits)", s)
	}
	c.pinSeq, c.pin = n, h
	return nil
}
