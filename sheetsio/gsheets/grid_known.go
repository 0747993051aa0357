package gsheets

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"

	"google.golang.org/api/sheets/v4"

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

// readGridByIDKnown is ReadGridKnown in one getByDataFilter request by
// sheetId (no enumeration) once the workbook knows every tab's sheetId;
// ok is false, with nothing read, when one is unknown or the read was
// rejected (a deleted tab): the caller then enumerates. Its digest
// starts with the tabs and sheetIds read this way, so it never matches
// one of the enumerating read.
func (p *Provider) readGridByIDKnown(ctx context.Context, w *sheetsio.Workbook, known sheetsio.BodyDigest, tabs []string) (map[string]*sheetsio.GridSnapshot, bool, error) {
	sorted := slices.Sorted(slices.Values(tabs))
	reqs := make(map[string]sheetsio.GridRequest, len(sorted))
	for _, t := range sorted {
		reqs[t] = sheetsio.GridRequest{Whole: true, ByID: true}
	}
	out, rows, req, ok := gridByID(w, sorted, reqs)
	if !ok {
		return nil, false, nil
	}
	ids := make([]int64, len(sorted))
	for i, t := range sorted {
		ids[i] = out[t].SheetID
	}
	digest := func() hash.Hash { return resolvedDigest(sorted, ids, make([]string, len(sorted))) }
	g, err := readDecodingChanged(known, func(known sheetsio.BodyDigest) (gridRead, error) {
		return p.getGridByID(ctx, w, req, digest, known)
	})
	if errors.Is(err, sheetsio.ErrReadRejected) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	markRead(out, sorted, g)
	if g.decoded {
		fillKnownGrids(w.Schema(), out, rows, g.sheets)
	}
	return out, true, nil
}

// getGridByID is one paced, retried grid read by sheetId; each attempt
// digests from a fresh digest.
func (p *Provider) getGridByID(ctx context.Context, w *sheetsio.Workbook, req *sheets.GetSpreadsheetByDataFilterRequest,
	digest func() hash.Hash, known sheetsio.BodyDigest) (gridRead, error) {
	var g gridRead
	err := p.read(ctx, "grid_get_by_sheet_id", func(ctx context.Context) error {
		var err error
		g, err = p.getGridByFilterKnown(ctx, w.SpreadsheetID(), req, digest(), known)
		return err
	})
	return g, err
}

// readDecodingChanged makes a grid read with the known digest and, when
// the tabs changed since that read (neither known nor decoded), makes it
// again, decoding.
func readDecodingChanged(known sheetsio.BodyDigest, get func(known sheetsio.BodyDigest) (gridRead, error)) (gridRead, error) {
	g, err := get(known)
	if err == nil && !g.known && !g.decoded {
		return get(sheetsio.BodyDigest{})
	}
	return g, err
}

// markRead gives the snapshots of the tabs read the read's digest and
// whether it was known (not decoded).
func markRead(out map[string]*sheetsio.GridSnapshot, tabs []string, g gridRead) {
	for _, t := range tabs {
		out[t].Body, out[t].Undecoded = g.body, g.known
	}
}
