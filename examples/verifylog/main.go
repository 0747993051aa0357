// Command verifylog is an auditor's independent check of a store's hash
// chain: it reads log.db with bbolt alone (read-only, the store closed or
// a backup copy), parses each record from the layout docs/events.md gives,
// recomputes the chain with crypto/sha256 and prints the head. It uses no
// Hikoutei package, so it shows that the documented layout is all an
// auditor needs.
//
//	go run ./examples/verifylog -log /backups/log.db [-pin SEQ:HASH]
//
//	go run ./examples/verifylog -log log.db -accept-salvage-holes
//
// It exits 1 naming the first record whose link or checksum does not
// hold, a sequence missing up to the head the log records, or a pin the
// log does not extend. A salvaged log has holes (the meta's salvage_lost
// sequences) after which the chain restarts: nothing ties the records
// after a hole to the ones before, so it refuses them too unless
// -accept-salvage-holes is given; it then prints each hole. A pin taken
// before a hole never vouches for the log after it: the hole's records
// are gone, yet the record after it still links to them, so the chain
// values after the hole match an old pin. Only a head pinned at or after
// the integrity.holes_recorded record that names the hole (the store
// appends one when it next opens) vouches across it; any other pin fails.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
	bolt "go.etcd.io/bbolt"
)

// record is what the chain needs of one record.
type record struct {
	link    []byte // nil: a record written before the chain
	fields  []byte // the chain form: the envelope and payload without token
	typ     string // the event type
	payload []byte // the canonical payload
}

// holesRecorded is the type of the record a store appends when it finds
// holes its log does not name yet; its payload is {"lost": "A-B, C"}.
// (Spelled in two parts: this program imports no Hikoutei package, and
// the module spells catalogue types only through events.Type constants.)
const holesRecorded = "integrity" + ".holes_recorded"

func main() {
	path := flag.String("log", "log.db", "the log file (a store's log.db or a backup)")
	pin := flag.String("pin", "", "a head kept earlier, SEQ:HASH, that the log must extend")
	accept := flag.Bool("accept-salvage-holes", false, "accept a chain that restarts after holes a salvage recorded (each is printed)")
	flag.Parse()
	w := &walk{pin: *pin, acceptHoles: *accept}
	err := w.verify(*path)
	for _, h := range w.holes {
		fmt.Println(h)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "verifylog:", err)
		os.Exit(1)
	}
	fmt.Printf("verified %d records\nhead %d:%x\n", w.records, w.seq, w.chain)
}

// walk is the state of one verification.
type walk struct {
	pin         string
	acceptHoles bool
	pinSeq      uint64
	pinHash     []byte
	pinned      bool
	lost        [][2]uint64 // the sequences a salvage recorded as lost
	seq         uint64      // the last record walked
	records     uint64
	chain       []byte   // the chain value after seq
	restart     bool     // a hole was passed: take the chain up from the next link
	holes       []string // one line per hole passed
	// unrecorded are the holes passed that no holes_recorded record
	// walked since names, with the index of their line in holes.
	unrecorded []hole
}

type hole struct {
	span [2]uint64
	line int
}

// verify walks the chain of the log at path.
func (w *walk) verify(path string) error {
	var err error
	if w.pinSeq, w.pinHash, err = parsePin(w.pin); err != nil {
		return err
	}
	w.pinned = w.pin == ""
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		meta, events := tx.Bucket([]byte("meta")), tx.Bucket([]byte("events"))
		if meta == nil || events == nil || len(meta.Get([]byte("head"))) != 8 {
			return errors.New("not a store's log: no meta and events buckets, or no head")
		}
		if w.lost, err = parseLost(string(meta.Get([]byte("salvage_lost")))); err != nil {
			return err
		}
		g := sha256.Sum256(append([]byte("hikoutei-chain-v1\n"), meta.Get([]byte("store_id"))...))
		w.chain = g[:]
		if err := w.checkPin(0); err != nil {
			return err
		}
		if err := events.ForEach(w.record); err != nil {
			return err
		}
		return w.end(binary.BigEndian.Uint64(meta.Get([]byte("head"))))
	})
	if err == nil && !w.pinned {
		err = fmt.Errorf("the log does not extend the pinned head %s", w.pin)
	}
	return err
}

// checkPin compares the chain value after seq with the pin: it must match,
// and every hole before it must be named by a holes_recorded record at or
// before it (else the pin predates the hole).
func (w *walk) checkPin(seq uint64) error {
	if w.pin == "" || seq != w.pinSeq || !bytes.Equal(w.chain, w.pinHash) {
		return nil
	}
	if len(w.unrecorded) > 0 {
		h := w.unrecorded[0].span
		return fmt.Errorf("the pin predates salvage hole %s: it commits to records the log no longer has, and no %s record "+
			"before it names the hole (pin a head taken after the store recorded the hole)", span(h[0], h[1]), holesRecorded)
	}
	w.pinned = true
	return nil
}

// recorded takes the holes a holes_recorded record at seq names off the
// unrecorded ones.
func (w *walk) recorded(seq uint64, r record) {
	if r.typ != holesRecorded {
		return
	}
	lost, ok := payloadString(r.payload, "lost")
	named, err := parseLost(lost)
	if !ok || err != nil {
		return
	}
	keep := w.unrecorded[:0]
	for _, h := range w.unrecorded {
		w2 := &walk{lost: named}
		if !w2.lostAll(h.span[0], h.span[1]) {
			keep = append(keep, h)
			continue
		}
		w.holes[h.line] += fmt.Sprintf("; recorded at seq %d", seq)
	}
	w.unrecorded = keep
}

// payloadString reads the string value of key from a canonical payload
// map: m<count>: then, for each entry, the key and the value, a string
// being s<byte length>:<bytes> (docs/events.md "Canonical encoding"). It
// reads maps of strings only: ok is false for anything else.
func payloadString(b []byte, key string) (string, bool) {
	str := func() (string, bool) {
		if len(b) == 0 || b[0] != 's' {
			return "", false
		}
		n, rest, found := strings.Cut(string(b[1:]), ":")
		l, err := strconv.Atoi(n)
		if !found || err != nil || l < 0 || l > len(rest) {
			return "", false
		}
		b = []byte(rest[l:])
		return rest[:l], true
	}
	if len(b) == 0 || b[0] != 'm' {
		return "", false
	}
	n, rest, found := strings.Cut(string(b[1:]), ":")
	count, err := strconv.Atoi(n)
	if !found || err != nil {
		return "", false
	}
	b = []byte(rest)
	for range count {
		k, ok := str()
		if !ok {
			return "", false
		}
		v, ok := str()
		if !ok {
			return "", false
		}
		if k == key {
			return v, true
		}
	}
	return "", false
}

// record walks one record: key k, stored bytes v.
func (w *walk) record(k, v []byte) error {
	if len(k) != 8 {
		return fmt.Errorf("seq %d: a key of %d bytes among the records", w.seq+1, len(k))
	}
	seq := binary.BigEndian.Uint64(k)
	if err := w.gap(seq); err != nil {
		return err
	}
	r, err := parse(v)
	if err != nil {
		return fmt.Errorf("seq %d: %w", seq, err)
	}
	switch {
	case r.link != nil && w.restart:
		w.restart, w.chain = false, r.link
		w.holes[len(w.holes)-1] += fmt.Sprintf("; the chain restarts at seq %d", seq)
	case r.link != nil && !bytes.Equal(r.link, w.chain):
		return fmt.Errorf("seq %d: its link is not the chain value of the records before it (or record %d was changed)", seq, seq-1)
	}
	w.recorded(seq, r)
	next := sha256.Sum256(append(append([]byte(nil), w.chain...), r.fields...))
	w.chain, w.seq = next[:], seq
	w.records++
	return w.checkPin(seq)
}

// gap checks the sequences between the last record walked and seq: none,
// or a hole a salvage recorded, which only -accept-salvage-holes accepts
// (nothing ties the records after it to the ones before).
func (w *walk) gap(seq uint64) error {
	if seq == w.seq+1 {
		return nil
	}
	if !w.lostAll(w.seq+1, seq-1) {
		return fmt.Errorf("seq %d: the record is missing", w.seq+1)
	}
	if !w.acceptHoles {
		return fmt.Errorf("seq %s: lost to a salvage, so the chain restarts after it and no link vouches for the records after the hole (-accept-salvage-holes accepts it)", span(w.seq+1, seq-1))
	}
	if w.pin != "" && w.pinSeq < seq {
		return fmt.Errorf("the pin predates salvage hole %s: no link ties the records after the hole to the pinned head, "+
			"so it vouches for nothing after seq %d (pin a head taken after the hole)", span(w.seq+1, seq-1), w.seq)
	}
	w.holes = append(w.holes, fmt.Sprintf("salvage hole: seq %s lost", span(w.seq+1, seq-1)))
	w.unrecorded = append(w.unrecorded, hole{span: [2]uint64{w.seq + 1, seq - 1}, line: len(w.holes) - 1})
	w.restart = true
	return nil
}

// end checks the sequences after the last record up to the log's head.
func (w *walk) end(head uint64) error {
	if w.seq == head {
		return nil
	}
	if w.seq < head && w.lostAll(w.seq+1, head) {
		return nil // lost last records: no link follows them
	}
	return fmt.Errorf("seq %d: the log's head is %d but its last record is %d", min(w.seq, head)+1, head, w.seq)
}

// span is "A" or "A-B".
func span(a, b uint64) string {
	if a == b {
		return strconv.FormatUint(a, 10)
	}
	return fmt.Sprintf("%d-%d", a, b)
}

// lostAll reports whether every sequence from a to b is recorded lost.
func (w *walk) lostAll(a, b uint64) bool {
	for _, r := range w.lost {
		if a >= r[0] && a <= r[1] {
			if b <= r[1] {
				return true
			}
			a = r[1] + 1
		}
	}
	return false
}

// parseLost reads the meta's salvage_lost value: ranges "A-B" or single
// sequences "A", in order, separated by ", ".
func parseLost(s string) ([][2]uint64, error) {
	var out [][2]uint64
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		b := a
		if isRange && err == nil {
			b, err = strconv.ParseUint(hi, 10, 64)
		}
		if err != nil || b < a {
			return nil, fmt.Errorf("the meta's salvage_lost %q does not parse", s)
		}
		out = append(out, [2]uint64{a, b})
	}
	return out, nil
}

// parse checks a record's checksum and returns its link and chain form:
// [3, link(32)] then format 1 or 2: seq, version, schema, epoch (uvarint),
// at (varint), stream, type, token, commit, payload (uvarint length +
// bytes); then the xxhash64 of all of it, little endian.
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
	rest, out := body[1:], []byte(nil)
	for i := range 10 { // 4 uvarints, the varint time, 5 length-prefixed fields
		n, size := fieldLen(i, rest)
		if size <= 0 || n > len(rest) {
			return record{}, errors.New("the record does not parse")
		}
		if i != 7 { // the fencing token is outside the chain
			out = append(out, rest[:n]...)
		}
		switch _, size := fieldLen(i, rest); i {
		case 6:
			r.typ = string(rest[size:n])
		case 9:
			r.payload = rest[size:n]
		}
		rest = rest[n:]
	}
	if len(rest) != 0 {
		return record{}, errors.New("the record does not parse")
	}
	r.fields = out
	return r, nil
}

// fieldLen is the byte length of field i at the start of b (a varint, or
// a length prefix and the bytes it counts), and how many bytes its
// length or value took (<= 0: malformed).
func fieldLen(i int, b []byte) (int, int) {
	if i < 5 {
		_, n := binary.Uvarint(b) // the time's zigzag varint has the same byte length
		return n, n
	}
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)) {
		return 0, -1
	}
	return n + int(l), n
}

func parsePin(s string) (uint64, []byte, error) {
	if s == "" {
		return 0, nil, nil
	}
	seq, hash, ok := strings.Cut(s, ":")
	n, err := strconv.ParseUint(seq, 10, 64)
	h, herr := hex.DecodeString(hash)
	if !ok || err != nil || herr != nil || len(h) != sha256.Size {
		return 0, nil, fmt.Errorf("-pin %q: want SEQ:HASH (64 hex digits)", s)
	}
	return n, h, nil
}
