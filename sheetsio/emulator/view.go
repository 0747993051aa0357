package emulator

import (
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// maxViewRows bounds the rows one tab page renders, so viewing a huge tab
// neither builds megabytes of HTML nor holds the state lock for long.
const maxViewRows = 1000

// viewTab is one tab as the HTML view shows it.
type viewTab struct {
	ID        int64
	Title     string
	Hidden    bool
	Rows      int
	Cols      int
	Cells     []viewRow
	Header    []string
	Truncated bool
}

// viewRow is one displayed row with its 1-based row number, as in the UI.
type viewRow struct {
	Num   int
	Cells []string
}

type viewBook struct {
	ID    string
	Title string
	Tabs  []viewTab
}

type viewPage struct {
	Books   []viewBook
	Book    *viewBook
	Tab     *viewTab
	MaxRows int
}

var viewTemplate = template.Must(template.New("view").Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>fake-sheets</title>
<style>body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}th{background:#eee}</style>
</head><body>
{{if .Tab}}<h1>{{.Book.Title}} — {{.Tab.Title}}</h1>
<p><a href="/view/{{.Book.ID}}">back</a> · {{.Tab.Rows}} × {{.Tab.Cols}}{{if .Tab.Hidden}} · hidden{{end}}{{if .Tab.Truncated}} · showing the first {{.MaxRows}} rows{{end}}</p>
<table><tr><th></th>{{range .Tab.Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Tab.Cells}}<tr><th>{{.Num}}</th>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{else if .Book}}<h1>{{.Book.Title}}</h1><p><a href="/">all spreadsheets</a></p><ul>
{{range .Book.Tabs}}<li><a href="/view/{{$.Book.ID}}/{{.ID}}">{{.Title}}</a> ({{.Rows}} × {{.Cols}}{{if .Hidden}}, hidden{{end}})</li>
{{end}}</ul>
{{else}}<h1>Spreadsheets</h1><ul>
{{range .Books}}<li><a href="/view/{{.ID}}">{{.Title}}</a> — {{len .Tabs}} tab(s)</li>
{{end}}</ul>{{end}}
</body></html>`))

// serveView serves GET /, /view/{id} and /view/{id}/{sheetId} (read-only).
func (e *Emulator) serveView(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(strings.TrimPrefix(r.URL.Path, "/view"), "/"), "/")
	page := viewPage{MaxRows: maxViewRows}
	e.mu.Lock()
	if parts[0] == "" {
		for _, id := range e.sortedIDsLocked() {
			page.Books = append(page.Books, e.viewBookLocked(e.books[id], -1))
		}
	} else if b, ok := e.books[parts[0]]; ok {
		sel := int64(-1)
		if len(parts) > 1 {
			sel, _ = strconv.ParseInt(parts[1], 10, 64)
		}
		vb := e.viewBookLocked(b, sel)
		page.Book = &vb
		for i := range vb.Tabs {
			if len(parts) > 1 && vb.Tabs[i].ID == sel {
				page.Tab = &vb.Tabs[i]
			}
		}
	}
	e.mu.Unlock()
	if (parts[0] != "" && page.Book == nil) || (len(parts) > 1 && page.Tab == nil) {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = viewTemplate.Execute(w, page)
}

func (e *Emulator) sortedIDsLocked() []string {
	ids := make([]string, 0, len(e.books))
	for id := range e.books {
		ids = append(ids, id)
	}
	sortStrings(ids)
	return ids
}

func (e *Emulator) viewBookLocked(b *book, withCells int64) viewBook {
	vb := viewBook{ID: b.ID, Title: b.Title}
	for _, s := range b.Sheets {
		t := viewTab{ID: s.ID, Title: s.Title, Hidden: s.Hidden, Rows: s.RowCount, Cols: s.ColCount}
		if s.ID == withCells {
			cells := b.displayedRows(s, maxViewRows)
			t.Truncated = s.RowCount > maxViewRows
			width := 0
			for i, row := range cells {
				width = max(width, len(row))
				t.Cells = append(t.Cells, viewRow{Num: i + 1, Cells: row})
			}
			for c := 0; c < width; c++ {
				t.Header = append(t.Header, a1Col(c))
			}
		}
		vb.Tabs = append(vb.Tabs, t)
	}
	return vb
}
