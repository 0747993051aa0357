package emulator

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The read-only HTML view: GET / lists the spreadsheets, /view/{id} shows a
// spreadsheet's first visible tab and /view/{id}/{sheetId} a given tab, with
// a tab strip at the bottom as in the Sheets UI. Cells show the text a
// FORMATTED_VALUE read returns. The page re-fetches itself every
// defaultRefresh seconds; ?refresh=N sets N seconds, ?refresh=0 turns it off.
// A tab shows at most maxViewRows rows, from row 1 or from ?row=N; the notes
// of cells outside them are listed under the grid, each with a link to its
// rows. The refresh fetches only the page's data (?part=page: the #page
// element, no style or script), so the policy's nonces never change under
// an open page. It is served by Handler, behind the same Host and Origin
// guard as the API.

// Refresh bounds, in seconds.
const (
	defaultRefresh = 5
	maxRefresh     = 3600
)

// viewBook is a spreadsheet as the view lists it.
type viewBook struct {
	Title, Href string
	Tabs        int
}

// viewTabLink is one tab of the bottom tab strip.
type viewTabLink struct {
	Title, Href, Class string
	Hidden, Current    bool
}

// viewPage is what the template renders: the index (Books) or one tab of
// one spreadsheet (Title, Strip, Tab).
type viewPage struct {
	Books   []viewBook
	Title   string
	Home    string
	Strip   []viewTabLink
	Tab     *viewTab
	Refresh int
	Row     int // the first row asked for (?row=N), 0 when none
	Nonce   string
	Path    string // the page's path, for its own links
}

// serveView serves GET /, /view/{id} and /view/{id}/{sheetId} (read-only).
func (e *Emulator) serveView(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	refresh, ok := refreshParam(q)
	if !ok {
		http.Error(w, "refresh must be a whole number of seconds from 0 (off) to 3600", http.StatusBadRequest)
		return
	}
	row, ok := rowParam(q)
	if !ok {
		http.Error(w, "row must be a row number from 1", http.StatusBadRequest)
		return
	}
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/view"), "/"), "/")
	page := viewPage{Refresh: refresh, Row: row, Path: r.URL.Path, Home: withRefresh("/", refresh)}
	e.mu.Lock()
	found := e.fillViewLocked(&page, parts)
	e.mu.Unlock()
	if !found {
		http.NotFound(w, r)
		return
	}
	page.Nonce = newNonce()
	writeViewHeaders(w.Header(), page.Nonce)
	if q.Get("part") == "page" { // the refresh: the data only
		_ = viewTemplate.ExecuteTemplate(w, "page", newViewDoc(page))
		return
	}
	_ = viewTemplate.Execute(w, newViewDoc(page))
}

// fillViewLocked fills page for the path parts; false means not found.
func (e *Emulator) fillViewLocked(page *viewPage, parts []string) bool {
	if parts[0] == "" {
		for _, id := range e.sortedIDsLocked() {
			b := e.books[id]
			page.Books = append(page.Books, viewBook{Title: b.Title, Href: bookHref(id, page.Refresh), Tabs: len(b.Sheets)})
		}
		return true
	}
	b, ok := e.books[parts[0]]
	if !ok || len(parts) > 2 {
		return false
	}
	s := b.firstVisibleSheet()
	if len(parts) == 2 {
		id, err := strconv.ParseInt(parts[1], 10, 64)
		if s = b.sheetByID(id); err != nil {
			return false
		}
	}
	if s == nil {
		return false
	}
	page.Title = b.Title
	page.Strip = tabStrip(b, s, page.Refresh)
	tabPath := bookPath(b.ID) + "/" + strconv.FormatInt(s.ID, 10)
	page.Tab = b.viewTabOf(s, page.Row, func(row int) string { return viewHref(tabPath, page.Refresh, row) })
	return true
}

// firstVisibleSheet is the tab the UI opens: the first one not hidden.
func (b *book) firstVisibleSheet() *sheet {
	for _, s := range b.Sheets {
		if !s.Hidden {
			return s
		}
	}
	if len(b.Sheets) == 0 {
		return nil
	}
	return b.Sheets[0]
}

// tabStrip lists every tab in order, hidden ones marked, cur highlighted.
func tabStrip(b *book, cur *sheet, refresh int) []viewTabLink {
	out := make([]viewTabLink, 0, len(b.Sheets))
	for _, s := range b.Sheets {
		href := bookPath(b.ID) + "/" + strconv.FormatInt(s.ID, 10)
		l := viewTabLink{Title: s.Title, Href: withRefresh(href, refresh), Hidden: s.Hidden, Current: s == cur}
		l.Class = tabClass(l)
		out = append(out, l)
	}
	return out
}

func tabClass(l viewTabLink) string {
	var c []string
	if l.Current {
		c = append(c, "current")
	}
	if l.Hidden {
		c = append(c, "hidden")
	}
	return strings.Join(c, " ")
}

func bookPath(id string) string { return "/view/" + url.PathEscape(id) }

func bookHref(id string, refresh int) string { return withRefresh(bookPath(id), refresh) }

// withRefresh carries a non-default refresh setting on a link.
func withRefresh(href string, refresh int) string { return viewHref(href, refresh, 0) }

// viewHref is a link to path carrying a non-default refresh setting and,
// when row > 0, the first row to show.
func viewHref(path string, refresh, row int) string {
	q := url.Values{}
	if refresh != defaultRefresh {
		q.Set("refresh", strconv.Itoa(refresh))
	}
	if row > 0 {
		q.Set("row", strconv.Itoa(row))
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// RefreshHref is a link to this page with the refresh set to secs.
func (p viewPage) RefreshHref(secs int) string { return viewHref(p.Path, secs, p.Row) }

// RowHref is a link to this page showing rows from row (0: from row 1).
func (p viewPage) RowHref(row int) string { return viewHref(p.Path, p.Refresh, row) }

// rowParam reads ?row=N (the first row to show, from 1); 0 when absent,
// false when invalid.
func rowParam(q url.Values) (int, bool) {
	v := q.Get("row")
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// refreshParam reads ?refresh=N (seconds, 0 = off); false when invalid.
func refreshParam(q url.Values) (int, bool) {
	v := q.Get("refresh")
	if v == "" {
		return defaultRefresh, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > maxRefresh {
		return 0, false
	}
	return n, true
}

// writeViewHeaders sets the content type and a policy that lets only the
// page's own style and script run (a value that slipped past escaping
// still could not run script or load anything).
func writeViewHeaders(h http.Header, nonce string) {
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'nonce-"+nonce+"'; script-src 'nonce-"+nonce+
		"'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func (e *Emulator) sortedIDsLocked() []string {
	ids := make([]string, 0, len(e.books))
	for id := range e.books {
		ids = append(ids, id)
	}
	sortStrings(ids)
	return ids
}
