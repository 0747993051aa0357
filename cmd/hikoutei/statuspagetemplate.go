package main

// statusCSS is the page's only style (allowed by its nonce).
const statusCSS = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
.meta{color:#666;margin:0}
table{border-collapse:collapse}th,td{border:1px solid #ccc;padding:.2em .6em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,monospace;word-break:break-all}
.ok{color:#11632b}.failing,.blocked,.diverged{color:#a10d0d;font-weight:bold}.behind,.migrating{color:#8a5a00}
ul.unread{color:#a10d0d}`

const statusHTML = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="{{.Refresh}}">
<title>hikoutei serve: {{.Health.Status}}</title>
<style nonce="{{.Nonce}}">` + statusCSS + `</style>
</head><body>
<header><h1>hikoutei serve: <span id="status" class="{{.Health.Status}}">{{.Health.Status}}</span></h1>
<p class="meta">read-only, as of {{.At}}; reloads every {{.Refresh}} s.
The same data as JSON: <a href="/healthz">/healthz</a>, <a href="/metrics">/metrics</a>.</p></header>
{{if .Unread}}<ul class="unread">{{range .Unread}}<li>not read now: {{.}}</li>{{end}}</ul>{{end}}
<section id="health"><h2>Health</h2><table>
{{with .Health}}<tr><th>local (commits)</th><td class="{{if eq .Local "ok"}}ok{{else}}failing{{end}}">{{.Local}}{{with .LocalCode}} ({{.}}){{end}}</td></tr>
<tr><th>sync</th><td class="{{if eq .Sync "ok"}}ok{{else}}failing{{end}}">{{.Sync}}{{with .SyncCode}} ({{.}}){{end}}</td></tr>
<tr><th>mirror</th><td>{{.Mirror}}{{with .MirrorCode}} ({{.}}){{end}}</td></tr>
{{with .Integrity}}<tr><th>integrity</th><td class="failing">{{.}}</td></tr>{{end}}
{{with .Admin}}<tr><th>administrative channel</th><td class="failing">{{.}}</td></tr>{{end}}
{{with .Replication}}<tr><th>replication</th><td>{{.Role}}, epoch {{.Epoch}}, stream head {{.Head}}</td></tr>{{end}}
{{with .NATSListen}}<tr><th>NATS listener</th><td>{{.}}</td></tr>{{end}}{{end}}
</table></section>
<section id="chain"><h2>Chain head</h2>
<p>seq <b id="chain-seq">{{.ChainSeq}}</b> <code id="chain-hash">{{.ChainHash}}</code></p>
<p class="meta">log head {{.LogHead}}, checkpoint {{.Checkpoint}}, lease epoch {{.Epoch}};
<code>SEQ:HASH</code> is what <code>hikoutei audit verify --pin</code> checks</p></section>
<section id="sync"><h2>Sync health</h2>
{{with .Health.SyncHealth}}<p>target <code>{{.Spreadsheet}}</code>: <span class="{{.State}}">{{.State}}</span>{{with .Reason}} ({{.}}){{end}},
{{.Pending}} pending, oldest {{seconds .OldestPendingSeconds}}, {{.DivergedRows}} rows diverged, last reconcile {{when .LastReconcile}}</p>
{{if .Tabs}}<table id="tabs"><thead><tr><th>tab</th><th>state</th><th>reason</th><th>pending</th><th>oldest pending</th>
<th>diverged rows</th><th>last reconcile</th></tr></thead><tbody>
{{range .Tabs}}<tr><td>{{.Tab}}</td><td class="{{.State}}">{{.State}}</td><td>{{or .Reason .Notice "-"}}</td><td class="n">{{.Pending}}</td>
<td>{{seconds .OldestPendingSeconds}}</td><td class="n">{{.DivergedRows}}</td><td>{{when .LastReconcile}}</td></tr>
{{end}}</tbody></table>{{else}}<p>no tab to show</p>{{end}}
{{range .Warnings}}<p class="behind">warning {{.Reason}}: {{.Detail}}</p>{{end}}
{{else}}<p>sync is off, or the spreadsheet is not provisioned yet</p>{{end}}</section>
<section id="conflicts"><h2>Open conflicts: <span id="conflict-count">{{.OpenConflicts}}</span></h2>
{{if .Conflicts}}<table><thead><tr><th>conflict</th><th>entity</th><th>id</th><th>field</th><th>tab</th><th>opened</th></tr></thead><tbody>
{{range .Conflicts}}<tr><td><code>{{.ID}}</code></td><td>{{.Entity}}</td><td>{{.EntityID}}</td><td>{{.Field}}</td><td>{{.Tab}}</td><td>{{.OpenedAt}}</td></tr>
{{end}}</tbody></table>{{if .MoreConflicts}}<p>and {{.MoreConflicts}} more</p>{{end}}
<p class="meta">values and resolution: <code>hikoutei conflicts list</code>, <code>hikoutei conflicts show ID</code></p>{{end}}</section>
<section id="quarantine"><h2>Quarantined: <span id="quarantine-count">{{.Quarantined}}</span></h2>
{{if .Quarantine}}<table><thead><tr><th>reason</th><th>records</th></tr></thead><tbody>
{{range .Quarantine}}<tr><td>{{.Name}}</td><td class="n">{{.Count}}</td></tr>{{end}}
</tbody></table><p class="meta">list them with <code>hikoutei quarantine list</code></p>{{end}}</section>
<section id="outbox"><h2>Outbox</h2>
{{if .Outbox}}<table><thead><tr><th>state</th><th>effects</th></tr></thead><tbody>
{{range .Outbox}}<tr><td>{{.Name}}</td><td class="n">{{.Count}}</td></tr>{{end}}
</tbody></table>{{end}}</section>
</body></html>`
