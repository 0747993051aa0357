package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"html/template"
	"net/http"
	"slices"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/observe"
)

// statusSource is what the status page reads: the running store's public
// API (a current is one).
type statusSource interface {
	Health() hikoutei.Health
	Stats(ctx context.Context) (hikoutei.Stats, error)
	Attention(ctx context.Context) (hikoutei.Attention, error)
	Conflicts(ctx context.Context, status hikoutei.ConflictStatus) ([]hikoutei.Conflict, error)
	ChainHead() (hikoutei.ChainPin, error)
}

// maxPageConflicts bounds the open conflicts the page lists one by one.
const maxPageConflicts = 20

// pageRefreshSeconds is how often the page reloads itself (a meta
// refresh: the page runs no script).
const pageRefreshSeconds = 10

// statusPageWait bounds the page's reads of the read model.
const statusPageWait = 2 * time.Second

// statusPage is what `serve --http` shows at /: health, the chain head,
// sync health by tab, open conflicts, quarantine and the outbox. It shows
// what /healthz and `hikoutei status` show (keys, fields, counts, codes),
// never a cell value, a spreadsheet id, a token or a credential.
type statusPage struct {
	Nonce         string
	At            string
	Refresh       int
	Health        observe.HealthReport
	ChainSeq      uint64
	ChainHash     string
	LogHead       uint64
	Checkpoint    uint64
	Epoch         uint64
	Outbox        []pageCount
	OpenConflicts int64
	Conflicts     []pageConflict
	MoreConflicts int
	Quarantined   int64
	Quarantine    []pageCount
	// Unread names the parts that could not be read now, with their code.
	Unread []string
}

// pageCount is a count under a name (an outbox state, a reason code).
type pageCount struct {
	Name  string
	Count int64
}

// pageConflict is one open conflict as the page lists it: where it is,
// never the values.
type pageConflict struct {
	ID, Entity, EntityID, Field, Tab, OpenedAt string
}

// statusPageHandler serves the page of the store src returns.
func statusPageHandler(src statusSource) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), statusPageWait)
		defer cancel()
		page := readStatusPage(ctx, src, time.Now())
		page.Nonce = pageNonce()
		writePageHeaders(w.Header(), page.Nonce)
		if err := statusTemplate.Execute(w, page); err != nil {
			return // the client went away; the page never carries a value to log
		}
	})
}

// readStatusPage gathers the page from src; a part that cannot be read
// is listed in Unread and the rest is shown.
func readStatusPage(ctx context.Context, src statusSource, now time.Time) statusPage {
	p := statusPage{At: now.UTC().Format(time.RFC3339), Refresh: pageRefreshSeconds, Health: observe.Report(src.Health())}
	if pin, err := src.ChainHead(); err != nil {
		p.unread("chain head", err)
	} else {
		p.ChainSeq, p.ChainHash = pin.Seq, pin.Hash.String()
	}
	if st, err := src.Stats(ctx); err != nil {
		p.unread("outbox", err)
	} else {
		p.LogHead, p.Checkpoint, p.Epoch = st.LogHead, st.Checkpoint, st.Lease.Epoch
		for state, n := range st.Outbox {
			p.Outbox = append(p.Outbox, pageCount{Name: string(state), Count: n})
		}
		slices.SortFunc(p.Outbox, func(a, b pageCount) int { return cmp.Compare(a.Name, b.Name) })
	}
	if a, err := src.Attention(ctx); err != nil {
		p.unread("quarantine", err)
	} else {
		p.OpenConflicts, p.Quarantine = a.OpenConflicts, byCount(a.Quarantine)
		for _, c := range p.Quarantine {
			p.Quarantined += c.Count
		}
	}
	p.readConflicts(ctx, src)
	return p
}

// readConflicts lists the oldest open conflicts, at most maxPageConflicts.
func (p *statusPage) readConflicts(ctx context.Context, src statusSource) {
	open, err := src.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil {
		p.unread("conflicts", err)
		return
	}
	p.OpenConflicts = int64(len(open))
	if len(open) > maxPageConflicts {
		p.MoreConflicts, open = len(open)-maxPageConflicts, open[:maxPageConflicts]
	}
	for _, c := range open {
		at := ""
		if !c.OpenedAt.IsZero() {
			at = c.OpenedAt.UTC().Format(time.RFC3339)
		}
		p.Conflicts = append(p.Conflicts, pageConflict{ID: c.ID, Entity: c.Entity, EntityID: c.EntityID, Field: c.Field, Tab: c.Tab, OpenedAt: at})
	}
}

// unread records that part could not be read, by the error's code only
// (an error's text may quote a value).
func (p *statusPage) unread(part string, err error) {
	p.Unread = append(p.Unread, part+": "+cmp.Or(hikoutei.ErrorCode(err), "unavailable"))
}

// byCount is m as counts, the largest first, then by name.
func byCount(m map[string]int64) []pageCount {
	out := make([]pageCount, 0, len(m))
	for name, n := range m {
		out = append(out, pageCount{Name: reasonText(name), Count: n})
	}
	slices.SortFunc(out, func(a, b pageCount) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name)) })
	return out
}

// writePageHeaders sets the content type and a policy that lets only the
// page's own style apply: no script runs, nothing else loads (a value
// that slipped past escaping could neither run nor fetch anything).
func writePageHeaders(h http.Header, nonce string) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+nonce+
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// pageNonce is a fresh nonce for one response's style.
func pageNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// seconds renders an age in seconds for the page ("-" for none).
func seconds(s float64) string {
	if s <= 0 {
		return "-"
	}
	return age(s)
}

var statusTemplate = template.Must(template.New("status").Funcs(template.FuncMap{"seconds": seconds, "when": stamp}).Parse(statusHTML))
