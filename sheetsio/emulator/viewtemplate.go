package emulator

import "html/template"

// viewStyle looks like the Sheets UI: a grid with row and column headers
// that stay in view, cells on one line (cut with an ellipsis; the tooltip
// has the rest), notes as a corner mark with a tinted cell (conflicts red,
// quarantined cells amber, other notes blue), and the tab strip at the
// bottom, the current tab white and green, hidden tabs grey and marked. The
// tab strip stays above the grid's sticky row and column headers.
const viewStyle = `body{margin:0 0 48px;font:13px Arial,sans-serif;color:#202124}
header{padding:8px 12px;border-bottom:1px solid #dadce0}
h1{font-size:18px;font-weight:normal;margin:0 0 4px}
.meta{color:#5f6368;margin:0}.meta a{color:#1a73e8}.stale{color:#c5221f}
table.grid{border-collapse:collapse}
.grid th,.grid td{border:1px solid #e2e3e3;padding:0;height:21px}
.grid th{background:#f8f9fa;color:#5f6368;font-weight:normal;min-width:40px;text-align:center}
.grid thead th{position:sticky;top:0;z-index:2}.grid tbody th{position:sticky;left:0;z-index:1}
.grid thead th:first-child{left:0;z-index:3}
.grid td{position:relative}
.grid td div{min-width:60px;max-width:240px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;padding:2px 4px}
.grid td.num{text-align:right}.grid td.bool{text-align:center}
td.note-conflict{background:#f4c7c3}td.note-quarantine{background:#fce8b2}td.note-note{background:#e8f0fe}
td.note-conflict::after,td.note-quarantine::after,td.note-note::after{content:"";position:absolute;top:0;right:0;border-style:solid;border-width:0 7px 7px 0;border-color:transparent #202124 transparent transparent}
section.notes{padding:8px 12px}section.notes h2{font-size:14px;margin:8px 0 4px}
section.notes ul{margin:0;padding:0;list-style:none}section.notes li{padding:2px 6px;margin:2px 0;max-width:60em}
section.notes li a{margin-left:6px;color:#1a73e8}
li.note-conflict{background:#f4c7c3}li.note-quarantine{background:#fce8b2}li.note-note{background:#e8f0fe}
nav.tabs{position:fixed;bottom:0;left:0;right:0;z-index:4;display:flex;overflow-x:auto;background:#f1f3f4;border-top:1px solid #dadce0}
nav.tabs a{padding:9px 16px;color:#3c4043;text-decoration:none;white-space:nowrap;border-right:1px solid #dadce0}
nav.tabs a.current{background:#fff;color:#188038;font-weight:bold;box-shadow:inset 0 -3px #188038}
nav.tabs a.hidden{color:#80868b;font-style:italic}nav.tabs .mark{font-size:11px;margin-left:6px}
ul.books{padding:8px 28px}`

// viewScript re-fetches the page's data every data-refresh seconds (the
// same address with part=page: the #page element alone, no style or
// script, so nothing in it meets the policy) and swaps it in, so the scroll
// position stays; it never runs anything the answer contains (a parsed
// document's scripts are inert). body's data-refreshes counts the swaps.
const viewScript = `(function(){
var secs=+document.body.dataset.refresh;if(!(secs>0))return;
var status=document.getElementById('refreshed'),n=0;
var u=new URL(location.href);u.searchParams.set('part','page');
function swap(html){
var next=new DOMParser().parseFromString(html,'text/html').getElementById('page');
var cur=document.getElementById('page');
if(next&&cur){cur.replaceWith(document.adoptNode(next));document.body.dataset.refreshes=++n;}
}
function tick(){
fetch(u,{cache:'no-store'}).then(function(r){if(!r.ok)throw new Error('HTTP '+r.status);return r.text();})
.then(function(t){swap(t);status.textContent='updated '+new Date().toLocaleTimeString();status.className='';})
.catch(function(){status.textContent='emulator unreachable';status.className='stale';})
.finally(function(){setTimeout(tick,secs*1000);});
}
setTimeout(tick,secs*1000);
})();`

const viewHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{if .Tab}}{{.Title}} — {{.Tab.Title}}{{else}}Spreadsheets{{end}} · fake-sheets</title>
<style nonce="{{.Nonce}}">{{.Style}}</style>
</head><body data-refresh="{{.Refresh}}">
<header><p class="meta"><a href="{{.Home}}">all spreadsheets</a> ·
{{if gt .Refresh 0}}auto-refresh every {{.Refresh}} s (<a href="{{.RefreshHref 0}}">stop</a>){{else}}auto-refresh off (<a href="{{.RefreshHref 5}}">turn on</a>){{end}}
<span id="refreshed"></span></p></header>
{{template "page" .}}
<script nonce="{{.Nonce}}">{{.Script}}</script>
</body></html>{{define "page"}}<div id="page">
{{if .Tab}}{{with .Tab}}<header><h1>{{$.Title}}</h1>
<p class="meta">{{.Title}} · {{.Rows}} × {{.Cols}}{{if .Hidden}} · hidden tab{{end}}{{if .MoreRows}} · {{if lt .Last .First}}no rows from row {{.First}}{{else}}showing rows {{.First}}–{{.Last}}{{end}}{{if gt .First 1}} (<a href="{{$.RowHref 0}}">from row 1</a>){{end}}{{end}}{{if .MoreCols}} · showing the first 100 columns{{end}}</p></header>
<table class="grid"><thead><tr><th></th>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Grid}}<tr><th>{{.Num}}</th>{{range .Cells}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if .Title}} title="{{.Title}}"{{end}}><div>{{.Text}}</div></td>{{end}}</tr>
{{end}}</tbody></table>
{{if or .Notes .Beyond}}<section class="notes">{{if .Notes}}<h2>Notes</h2><ul>
{{range .Notes}}<li class="note-{{.Kind}}"><b>{{.Ref}}</b> {{.Text}}</li>
{{end}}</ul>{{end}}{{if .Beyond}}<h2>Notes outside the rows shown</h2><ul class="beyond">
{{range .Beyond}}<li class="note-{{.Kind}}"><b>{{.Ref}}</b> {{.Text}}<a href="{{.Href}}">show row</a></li>
{{end}}</ul>{{end}}{{if .MoreNotes}}<p class="meta">showing the first 500 notes</p>{{end}}</section>{{end}}{{end}}
<nav class="tabs">{{range .Strip}}<a href="{{.Href}}"{{if .Class}} class="{{.Class}}"{{end}}{{if .Current}} aria-current="page"{{end}}><span class="title">{{.Title}}</span>{{if .Hidden}}<span class="mark">(hidden)</span>{{end}}</a>{{end}}</nav>
{{else}}<header><h1>Spreadsheets</h1></header><ul class="books">
{{range .Books}}<li><a href="{{.Href}}">{{.Title}}</a> — {{.Tabs}} tab(s)</li>
{{end}}</ul>{{end}}
</div>{{end}}`

// viewTemplate renders a viewPage; html/template escapes every value for
// its context (text, attribute, URL).
var viewTemplate = template.Must(template.New("view").Parse(viewHTML))

// viewDoc is a page plus the constant style and script.
type viewDoc struct {
	viewPage
	Style  template.CSS
	Script template.JS
}

func newViewDoc(p viewPage) viewDoc {
	return viewDoc{viewPage: p, Style: template.CSS(viewStyle), Script: template.JS(viewScript)}
}
