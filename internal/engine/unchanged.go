package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"math"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/effects"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// An idle store's passes read the same cells over and over: a safety full
// scan, the surplus-row cleanup and anti-entropy each decide every row of
// a tab, which costs a few read-model queries per row. Their decisions are
// pure: given the same read (the same cells, formulas, merges and row
// order), the same read model (the same checkpoint of the same log) and
// the same base, they decide the same, whatever the time. So a pass whose
// read digests to what the last pass of its kind over the tab read, at the
// same checkpoint and base, when that pass decided to change nothing,
// changes nothing again: it is skipped without decoding a row or reading
// a row's state (Stats.Unchanged counts them). Anything that changes the
// sheet changes the digest; anything that changes the store moves the
// checkpoint (every decision is a logged event, I23).

// passKind names what a pass decides about a tab.
type passKind uint8

const (
	passObserve     passKind = iota + 1 // an escalated poll's grid read, whole tab
	passObserveFull                     // a safety full scan
	passCleanup                         // the surplus-row cleanup (I21)
	passRepair                          // an anti-entropy comparison (I28)
	passUnsynced                        // the search for entities never queued
)

// passKey is one kind of pass over one tab (of one spreadsheet, for a
// repair).
type passKey struct {
	kind        passKind
	spreadsheet string
	tab         string
}

// unchangedMark is what the last pass of its kind over a tab read and
// found: nothing to change, at checkpoint over proj, for a read with base.
type unchangedMark struct {
	proj       *projector.Projector
	checkpoint uint64
	base       uint64
	digest     [sha256.Size]byte
	observed   aggregates.ObserveStats // what an observation reported
	repaired   aggregates.RepairReport // what a repair reported
	valid      bool                    // the read was digested
	body       sheetsio.BodyDigest     // the whole grid read's digest (zero: none)
}

// unchangedReads holds one mark per pass kind and tab; owned by the
// writer goroutine.
type unchangedReads map[passKey]unchangedMark

// mark is the mark of a pass with base reading digest, at the read
// model's checkpoint now; ok false (a read not digested) makes a mark
// that is never the same as another nor remembered.
func (e *Engine) mark(base uint64, digest [sha256.Size]byte, ok bool) unchangedMark {
	return unchangedMark{proj: e.proj, checkpoint: e.proj.Checkpoint(), base: base, digest: digest, valid: ok}
}

// same reports whether m is the remembered mark of k: the pass may be
// skipped.
func (e *Engine) same(k passKey, m unchangedMark) (unchangedMark, bool) {
	old, ok := e.unchanged[k]
	if !ok || !old.sameAs(m) {
		return unchangedMark{}, false
	}
	e.stats.Unchanged++
	return old, true
}

// gridSame decides whether a pass of kind k at base may skip the grid
// read g of one tab: it returns the pass's mark and, when same, the
// remembered one. A read its provider did not decode (Undecoded: the
// digest KnownGrid gave) is the remembered read when the read model
// still is where that pass left it; otherwise it is ErrReadUndecoded
// (the poller reads again). A decoded read that is the same as the
// remembered one keeps its whole-read digest for the next KnownGrid.
func (e *Engine) gridSame(k passKey, base uint64, g *sheetsio.GridSnapshot) (m, old unchangedMark, same bool, err error) {
	if g != nil && g.Undecoded {
		if old, same = e.sameBody(k, base, g.Body); !same {
			return m, old, false, fmt.Errorf("engine: %w: tab %s", effects.ErrReadUndecoded, g.Tab)
		}
		return old, old, true, nil
	}
	d, ok := gridDigest(g)
	m = e.mark(base, d, ok)
	m.body = g.Body
	if old, same = e.same(k, m); same && old.body != m.body {
		old.body = m.body
		e.unchanged[k] = old
	}
	return m, old, same, nil
}

// sameBody reports whether the whole grid read body is the one k's
// remembered mark was made from, at the read model's checkpoint now and
// base.
func (e *Engine) sameBody(k passKey, base uint64, body sheetsio.BodyDigest) (unchangedMark, bool) {
	old, ok := e.unchanged[k]
	if !ok || body.IsZero() || old.body != body || old.proj != e.proj || old.checkpoint != e.proj.Checkpoint() || old.base != base {
		return unchangedMark{}, false
	}
	e.stats.Unchanged++
	return old, true
}

// KnownGrid implements effects.KnownGrids: the digest of the whole grid
// read the last passes of the given kinds (a full scan's observation,
// the cleanup) made of tabs, when each of them found nothing to change
// in every tab, at the read model's checkpoint now and base. Zero when
// there is none: the read is decoded.
func (e *Engine) KnownGrid(base uint64, tabs []string, full, cleanup bool) (sheetsio.BodyDigest, error) {
	var kinds []passKind
	if full {
		kinds = append(kinds, passObserveFull)
	}
	if cleanup {
		kinds = append(kinds, passCleanup)
	}
	var body sheetsio.BodyDigest
	err := e.onWriter(func() error {
		body = e.knownGrid(base, tabs, kinds)
		return nil
	})
	return body, err
}

func (e *Engine) knownGrid(base uint64, tabs []string, kinds []passKind) (body sheetsio.BodyDigest) {
	for _, t := range tabs {
		for _, kind := range kinds {
			m, ok := e.unchanged[passKey{kind: kind, tab: t}]
			if !ok || m.body.IsZero() || m.proj != e.proj || m.checkpoint != e.proj.Checkpoint() || m.base != base ||
				(!body.IsZero() && m.body != body) {
				return sheetsio.BodyDigest{}
			}
			body = m.body
		}
	}
	return body
}

// sameAs reports whether m and o are marks of the same read at the same
// checkpoint and base of the same read model (a mark not valid is the
// same as none).
func (m unchangedMark) sameAs(o unchangedMark) bool {
	return m.valid && o.valid && m.proj == o.proj && m.checkpoint == o.checkpoint && m.base == o.base && m.digest == o.digest
}

// remember keeps m for k when the pass committed nothing (the checkpoint
// did not move); otherwise it forgets k.
func (e *Engine) remember(k passKey, m unchangedMark) {
	if e.unchanged == nil {
		e.unchanged = unchangedReads{}
	}
	if !m.valid || e.proj != m.proj || e.proj.Checkpoint() != m.checkpoint {
		delete(e.unchanged, k)
		return
	}
	e.unchanged[k] = m
}

// gridDigest is the SHA-256 of everything a grid read of a whole tab
// shows a decision: every row's number, anchor and cells (value with its
// type, formula, error, merge), and the header's width and ignored
// columns. ok is false for a partial or failed read (never remembered).
func gridDigest(g *sheetsio.GridSnapshot) (d [sha256.Size]byte, ok bool) {
	if g == nil || g.Err != nil || g.Partial {
		return d, false
	}
	h := sha256.New()
	digestString(h, g.Tab)
	digestInt(h, g.SheetID, int64(g.Header.Width), int64(len(g.Header.Ignored)))
	for _, i := range g.Header.Ignored {
		digestInt(h, int64(i))
		digestString(h, g.Header.Retired[i])
	}
	digestInt(h, int64(len(g.Rows)))
	for i := range g.Rows {
		r := &g.Rows[i]
		digestInt(h, int64(r.SheetRow), int64(len(r.Cells)))
		digestString(h, r.Anchor)
		for _, c := range r.Cells {
			digestObserved(h, c)
		}
	}
	h.Sum(d[:0])
	return d, true
}

// seenDigest is the SHA-256 of what an anti-entropy pass read of a tab:
// its rows' anchors and hashes in order, the anchorless rows, and whether
// it was recreated.
func seenDigest(s aggregates.SeenTab) (d [sha256.Size]byte) {
	h := sha256.New()
	digestString(h, s.Tab)
	digestString(h, s.Blocked)
	digestInt(h, int64(s.Anchorless), int64(len(s.Rows)))
	digestBool(h, s.Recreated)
	for _, r := range s.Rows {
		digestString(h, r.Anchor)
		digestString(h, r.Hash)
	}
	h.Sum(d[:0])
	return d
}

func digestObserved(h hash.Hash, c cell.Observed) {
	digestValue(h, c.Value)
	digestString(h, c.Formula)
	digestString(h, c.ErrorType)
	digestBool(h, c.Merged)
}

func digestBool(h hash.Hash, b bool) {
	if b {
		digestInt(h, 1)
		return
	}
	digestInt(h, 0)
}

// digestValue writes a cell value with its type: 1 and "1" differ.
func digestValue(h hash.Hash, v any) {
	switch x := v.(type) {
	case nil:
		digestInt(h, 0)
	case string:
		digestInt(h, 1)
		digestString(h, x)
	case float64:
		digestInt(h, 2, int64(math.Float64bits(x)))
	case bool:
		digestInt(h, 3)
		digestBool(h, x)
	default:
		digestInt(h, 4)
		digestString(h, fmt.Sprintf("%T %#v", v, v))
	}
}

func digestString(h hash.Hash, s string) {
	digestInt(h, int64(len(s)))
	h.Write([]byte(s))
}

func digestInt(h hash.Hash, xs ...int64) {
	var b [8]byte
	for _, x := range xs {
		binary.LittleEndian.PutUint64(b[:], uint64(x))
		h.Write(b[:])
	}
}
