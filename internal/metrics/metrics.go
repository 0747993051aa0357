// Package metrics exposes a store's counters to Prometheus: commits, events
// and log transactions; outbox effects by state; dispatcher activity; the
// writer lease epoch; open conflicts and active quarantine.
package metrics

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Source is what the collector reads at scrape time.
type Source interface {
	Stats(ctx context.Context) (hikoutei.Stats, error)
}

var (
	descCommits  = prometheus.NewDesc("hikoutei_commits_total", "Units of work committed with at least one event.", nil, nil)
	descEvents   = prometheus.NewDesc("hikoutei_events_total", "Events appended by commits.", nil, nil)
	descLogTxns  = prometheus.NewDesc("hikoutei_log_transactions_total", "Log transactions (group commits).", nil, nil)
	descOutbox   = prometheus.NewDesc("hikoutei_outbox_effects", "Effects in the outbox by state.", []string{"state"}, nil)
	descEpoch    = prometheus.NewDesc("hikoutei_lease_epoch", "Writer lease epoch held by this process.", nil, nil)
	descDispatch = prometheus.NewDesc("hikoutei_dispatcher_total", "Dispatcher activity by kind (passes, dispatches, claimed, applied, uncertain, failed, retried, conflicts, probes, superseded, backfilled, misdirected).", []string{"kind"}, nil)
)

type collector struct{ src Source }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCommits, descEvents, descLogTxns, descOutbox, descEpoch, descDispatch} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	st, err := c.src.Stats(context.Background())
	if err != nil {
		return
	}
	ch <- prometheus.MustNewConstMetric(descCommits, prometheus.CounterValue, float64(st.Commits))
	ch <- prometheus.MustNewConstMetric(descEvents, prometheus.CounterValue, float64(st.Events))
	ch <- prometheus.MustNewConstMetric(descLogTxns, prometheus.CounterValue, float64(st.LogTxns))
	ch <- prometheus.MustNewConstMetric(descEpoch, prometheus.GaugeValue, float64(st.Lease.Epoch))
	for state, n := range st.Outbox {
		ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(n), string(state))
	}
	for kind, n := range st.Dispatcher {
		ch <- prometheus.MustNewConstMetric(descDispatch, prometheus.CounterValue, float64(n), kind)
	}
}

// Handler serves the store's metrics (plus Go runtime metrics) in the
// Prometheus text format.
func Handler(src Source) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector{src}, prometheus.NewGoCollector())
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
