package sheetsio

import (
	"time"
)

// DefaultTrustTTL is how long a tab header and an authority a dispatch
// verified let an append-only batch skip its preflight read (Config.TrustTTL).
const DefaultTrustTTL = 10 * time.Second

// trust is what a Workbook last verified of its spreadsheet, and when: the
// tabs whose header validated (with the title the read saw) and the
// authority that showed exactly a writer's fence (I05). A verification is
// a preflight read or the atomic response of an append-only batchUpdate
// (verify in blindCheck); a drift, a changed authority or a failed write
// forgets it, so the next dispatch reads again.
type trust struct {
	tabs    map[string]tabTrust
	fence   Fence
	fenceAt time.Time // zero: no verified authority
}

type tabTrust struct {
	title string
	at    time.Time
}

// trustSnaps records the tabs a read verified at now (a header that
// validated, a known title) and forgets the ones it found unusable.
func (w *Workbook) trustSnaps(snaps map[string]*TabSnapshot, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.trust.tabs == nil {
		w.trust.tabs = map[string]tabTrust{}
	}
	for name, s := range snaps {
		if s.Err != nil || s.title == "" {
			delete(w.trust.tabs, name)
			continue
		}
		w.trust.tabs[name] = tabTrust{title: s.title, at: now}
	}
}

// trustFence records that the authority showed exactly f at now.
func (w *Workbook) trustFence(f Fence, now time.Time) {
	w.mu.Lock()
	w.trust.fence, w.trust.fenceAt = f, now
	w.mu.Unlock()
}

// distrust forgets the verified authority and the named tabs: the next
// dispatch that touches them reads first.
func (w *Workbook) distrust(tabs ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.trust.fenceAt = time.Time{}
	for _, t := range tabs {
		delete(w.trust.tabs, t)
	}
}

// trusted returns the titles of tabs when every one of them, and the
// authority for f (when f is set), was verified within ttl before now.
func (w *Workbook) trusted(tabs []string, f *Fence, now time.Time, ttl time.Duration) (map[string]string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fresh := func(at time.Time) bool { return !at.IsZero() && !now.Before(at) && now.Sub(at) < ttl }
	if f != nil && (w.trust.fence != *f || !fresh(w.trust.fenceAt)) {
		return nil, false
	}
	titles := make(map[string]string, len(tabs))
	for _, t := range tabs {
		tt, ok := w.trust.tabs[t]
		if !ok || !fresh(tt.at) {
			return nil, false
		}
		titles[t] = tt.title
	}
	return titles, true
}
