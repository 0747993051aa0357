package gsheets

import (
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// DefaultTrustTTL is how long a tab header and an authority a dispatch
// verified let an append-only batch skip its preflight read, and the rows
// a read showed of a System tab a batch of updates of them
// (Config.TrustTTL).
const DefaultTrustTTL = 10 * time.Second

// trust is what a Workbook last verified of its spreadsheet, and when: the
// tabs whose header validated (with the title the read saw) and the
// authority that showed exactly a writer's fence (I05). A verification is
// a preflight read or the atomic response of an append-only batchUpdate
// (verify in blindCheck); a drift, a changed authority or a failed write
// forgets it, so the next dispatch reads again.
type trust struct {
	mu      sync.Mutex
	tabs    map[string]tabTrust
	fence   sheetsio.Fence
	fenceAt time.Time // zero: no verified authority
	// cell is what the authority row's chain_head cell last showed this
	// client (a preflight read) or a batchUpdate of its wrote; wrote is
	// the highest head sequence this client wrote (chainhead.go).
	cell  sheetsio.ChainHead
	wrote uint64
	// kept are the System tabs' rows a preflight read, by sheetId, kept
	// current with this client's verified writes (knownrows.go).
	kept map[int64]keptTab
}

type tabTrust struct {
	Title string
	at    time.Time
}

// trustOf is the trust the provider keeps for w (its client state).
func trustOf(w *sheetsio.Workbook) *trust {
	return w.ClientState(func() any { return &trust{} }).(*trust)
}

// trustSnaps records the tabs a read verified at now (a header that
// validated, a known title) and forgets the ones it found unusable.
func (tr *trust) trustSnaps(snaps map[string]*sheetsio.TabSnapshot, now time.Time) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.tabs == nil {
		tr.tabs = map[string]tabTrust{}
	}
	for name, s := range snaps {
		if s.Err != nil || s.Title == "" {
			delete(tr.tabs, name)
			continue
		}
		tr.tabs[name] = tabTrust{Title: s.Title, at: now}
	}
}

// trustFence records that the authority showed exactly f at now.
func (tr *trust) trustFence(f sheetsio.Fence, now time.Time) {
	tr.mu.Lock()
	tr.fence, tr.fenceAt = f, now
	tr.mu.Unlock()
}

// distrust forgets the verified authority, the named tabs and their kept
// rows (every tab's when none is named): the next dispatch that touches
// them reads first.
func (tr *trust) distrust(tabs ...string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.fenceAt = time.Time{}
	tr.forgetRows(tabs...)
	for _, t := range tabs {
		delete(tr.tabs, t)
	}
}

// trusted returns the titles of tabs when every one of them, and the
// authority for f (when f is set), was verified within ttl before now.
func (tr *trust) trusted(tabs []string, f *sheetsio.Fence, now time.Time, ttl time.Duration) (map[string]string, bool) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	fresh := func(at time.Time) bool { return !at.IsZero() && !now.Before(at) && now.Sub(at) < ttl }
	if f != nil && (tr.fence != *f || !fresh(tr.fenceAt)) {
		return nil, false
	}
	titles := make(map[string]string, len(tabs))
	for _, t := range tabs {
		tt, ok := tr.tabs[t]
		if !ok || !fresh(tt.at) {
			return nil, false
		}
		titles[t] = tt.Title
	}
	return titles, true
}

// shownHead records the chain_head cell a preflight read showed.
func (tr *trust) shownHead(h sheetsio.ChainHead) {
	tr.mu.Lock()
	tr.cell = h
	tr.mu.Unlock()
}

// wroteHead records a chain head a batchUpdate wrote.
func (tr *trust) wroteHead(h sheetsio.ChainHead) {
	tr.mu.Lock()
	tr.cell, tr.wrote = h, max(tr.wrote, h.Seq)
	tr.mu.Unlock()
}

// heads is the chain_head cell last known on the sheet and the highest
// head this client wrote.
func (tr *trust) heads() (sheetsio.ChainHead, uint64) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.cell, tr.wrote
}
