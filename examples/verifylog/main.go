// Command verifylog is an auditor's independent check of a store's hash
// chain: it reads log.db with bbolt alone (read-only, the store closed or
// a backup copy), parses each record from the layout docs/events.md gives,
// recomputes the chain with crypto/sha256 and prints the head. It uses no
// Hikoutei package, so it shows that the documented layout is all an
// auditor needs.
//
//	go run ./examples/verifylog -log /backups/log.db [-pin SEQ:HASH]
//
// It exits 1 naming the first record whose link or checksum does not
// hold, a sequence missing up to the head the log records, or a pin the
// log does not extend. A salvaged log (with recorded
// holes) is for `hikoutei audit verify`, which knows where a salvage
// restarts the chain.
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
	link   []byte // nil: a record written before the chain
	fields []byte // the chain form: the envelope and payload without token
}

func main() {
	path := flag.String("log", "log.db", "the log file (a store's log.db or a backup)")
	pin := flag.String("pin", "", "a head kept earlier, SEQ:HASH, that the log must extend")
	flag.Parse()
	seq, head, err := verify(*path, *pin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "verifylog:", err)
		os.Exit(1)
	}
	fmt.Printf("verified %d records\nhead %d:%x\n", seq, seq, head)
}

// verify walks the chain of the log at path; it returns the last seq and
// the chain value after it.
func verify(path, pin string) (uint64, []byte, error) {
	pinSeq, pinHash, err := parsePin(pin)
	if err != nil {
		return 0, nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return 0, nil, err
	}
	defer db.Close()
	var seq uint64
	var chain []byte
	pinned := pin == ""
	err = db.View(func(tx *bolt.Tx) error {
		meta, events := tx.Bucket([]byte("meta")), tx.Bucket([]byte("events"))
		if meta == nil || events == nil || len(meta.Get([]byte("head"))) != 8 {
			return errors.New("not a store's log: no meta and events buckets, or no head")
		}
		head := meta.Get([]byte("head"))
		id := meta.Get([]byte("store_id"))
		g := sha256.Sum256(append([]byte("hikoutei-chain-v1\n"), id...))
		chain = g[:]
		pinned = pinned || pinSeq == 0 && bytes.Equal(chain, pinHash)
		err := events.ForEach(func(k, v []byte) error {
			if seq++; len(k) != 8 {
				return fmt.Errorf("seq %d: a key of %d bytes among the records", seq, len(k))
			}
			if binary.BigEndian.Uint64(k) != seq {
				return fmt.Errorf("seq %d: the record is missing", seq)
			}
			r, err := parse(v)
			if err != nil {
				return fmt.Errorf("seq %d: %w", seq, err)
			}
			if r.link != nil && !bytes.Equal(r.link, chain) {
				return fmt.Errorf("seq %d: its link is not the chain value of the records before it (or record %d was changed)", seq, seq-1)
			}
			next := sha256.Sum256(append(append([]byte(nil), chain...), r.fields...))
			chain = next[:]
			pinned = pinned || seq == pinSeq && bytes.Equal(chain, pinHash)
			return nil
		})
		if h := binary.BigEndian.Uint64(head); err == nil && seq != h {
			err = fmt.Errorf("seq %d: the log's head is %d but its last record is %d", min(seq, h)+1, h, seq)
		}
		return err
	})
	if err == nil && !pinned {
		err = fmt.Errorf("the log does not extend the pinned head %s", pin)
	}
	return seq, chain, err
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
