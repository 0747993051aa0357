package gsheets

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// digestRange is the state of one value range decoded with a RowCheck.
type digestRange struct {
	spec   layout.TabSpec
	shape  cell.RowShape
	check  sheetsio.RowCheck
	rows   int  // data rows seen
	failed bool // not certifiable: the rows are decoded at the end
	arena  rowArena
}

func newDigestRange(spec layout.TabSpec, check sheetsio.RowCheck) *digestRange {
	blank := make([]bool, len(spec.Columns))
	for i, c := range spec.Columns {
		blank[i] = c.Person
	}
	check.Begin()
	return &digestRange{spec: spec, check: check, shape: cell.RowShape{Width: len(spec.Columns), Blank: blank, Anchor: spec.Anchor}}
}

// header checks the header row: a drifted header is never certified.
func (r *digestRange) header(h []any) {
	if _, err := sheetsio.CheckHeader(r.spec, h); err != nil {
		r.failed = true
	}
}

// row digests one data row (raw JSON) and keeps its bytes until the tab
// is certified or decoded.
func (r *digestRange) row(dg *cell.RowDigester, raw []byte) {
	r.rows++
	r.arena.add(raw)
	if r.failed {
		return
	}
	d, ok := dg.Digest(raw, r.shape)
	r.failed = !ok || !r.check.Row(r.rows+1, d)
}

// certified reports whether the check certified every row (the header
// was read: an empty range is left to the full decode).
func (r *digestRange) certified(headerRead bool) bool {
	return headerRead && !r.failed && r.check.Done()
}

// rowArena keeps the raw rows of a tab being certified, in chunks (no
// regrowth copies), one JSON value per line.
type rowArena struct {
	chunks [][]byte
}

const arenaChunk = 1 << 20

func (a *rowArena) add(raw []byte) {
	n := len(a.chunks)
	if n == 0 || cap(a.chunks[n-1])-len(a.chunks[n-1]) < len(raw)+1 {
		a.chunks, n = append(a.chunks, make([]byte, 0, max(arenaChunk, len(raw)+1))), n+1
	}
	a.chunks[n-1] = append(append(a.chunks[n-1], raw...), '\n')
}

func (a *rowArena) reader() io.Reader {
	rs := make([]io.Reader, len(a.chunks))
	for i, c := range a.chunks {
		rs[i] = bytes.NewReader(c)
	}
	return io.MultiReader(rs...)
}

// decode appends the kept rows to values, decoded as a read without a
// check decodes them.
func (a *rowArena) decode(values [][]any) ([][]any, error) {
	dec := json.NewDecoder(a.reader())
	var row []any
	for dec.More() {
		if err := dec.Decode(&row); err != nil {
			return nil, err
		}
		values = append(values, append(make([]any, 0, len(row)), row...))
		clear(row)
	}
	return values, nil
}
