package gsheets

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"io"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// A grid read of an idle store's tabs receives the same bytes pass after
// pass. ReadGridKnown digests each read — which sheet each requested tab
// resolved to, then the response body — and, when the caller knows the
// digest its last read had, only digests the body as it streams, holding
// none of it: the same digest is the same answer, so nothing is decoded.
// A different one means the tabs changed since (a person's edit): the
// read is made again and decoded (one more read request, only then).
// Without a known digest the body is decoded as it streams and digested
// on the way.

// maxTrailing bounds what a grid read digests after the JSON document a
// decoder stops at (whitespace, normally); a response with more has no
// digest.
const maxTrailing = 64 << 10

// gridRead is one grid read: its sheets (nil unless decoded), its digest
// and, with a known digest, whether the read had it.
type gridRead struct {
	sheets  []*gridSheet
	body    sheetsio.BodyDigest
	known   bool
	decoded bool
}

// resolvedDigest starts a read's digest with the sheets its tabs
// resolved to, in request order.
func resolvedDigest(tabs []string, ids []int64, titles []string) hash.Hash {
	h := sha256.New()
	var n [8]byte
	for i := range tabs {
		digestBytes(h, []byte(tabs[i]))
		digestBytes(h, []byte(titles[i]))
		binary.BigEndian.PutUint64(n[:], uint64(ids[i]))
		h.Write(n[:])
	}
	return h
}

// decodeKnown decodes a grid response body r into its sheets, digesting
// every byte into h; with a known digest it only digests the body, and
// decodes nothing.
func decodeKnown(r io.Reader, h hash.Hash, known sheetsio.BodyDigest, want func(int64, int) bool) (gridRead, error) {
	if known.IsZero() {
		tee := io.TeeReader(r, h)
		ss, err := decodeGrid(tee, want)
		if err != nil {
			return gridRead{}, err
		}
		return gridRead{sheets: ss, body: rest(tee, h), decoded: true}, nil
	}
	d, err := digestAll(r, h)
	return gridRead{body: d, known: d == known}, err
}

// digestAll digests the rest of a response body into h, holding none of
// it.
func digestAll(r io.Reader, h hash.Hash) (d sheetsio.BodyDigest, err error) {
	if _, err := io.Copy(h, r); err != nil {
		return d, fmt.Errorf("%w: response: %w", sheetsio.ErrReadUnavailable, err)
	}
	h.Sum(d[:0])
	return d, nil
}

// digestBytes writes b into h with its length first.
func digestBytes(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// rest digests what is left of a body after its JSON document; a body
// with more than maxTrailing bytes left has no digest.
func rest(tee io.Reader, h hash.Hash) (d sheetsio.BodyDigest) {
	n, err := io.Copy(io.Discard, io.LimitReader(tee, maxTrailing+1))
	if err != nil || n > maxTrailing {
		return d
	}
	h.Sum(d[:0])
	return d
}
