// Package observe is what an application mounts to watch an embedded
// store: a Prometheus collector it registers on its own registry, fed by
// the store's hooks (commit latency, Sheets request latency, 429s and
// retries) and read from the store at scrape time (outbox depth by
// state, oldest pending effect, open conflicts, active quarantine,
// read-model lag, sync health by tab, build info), and an http.Handler
// for health (JSON, 200 when healthy, 503 when not). `hikoutei serve
// --http` serves the same two.
//
//	m := observe.New()
//	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Observer: m, Sync: syncOpts}, entities...)
//	m.Watch(s)
//	reg := prometheus.NewRegistry()
//	reg.MustRegister(m)
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//	http.Handle("/healthz", observe.HealthHandler(s))
//
// Series and labels never carry ids, spreadsheet ids or cell values
// (docs/metrics.md lists them).
package observe
