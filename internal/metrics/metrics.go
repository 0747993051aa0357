// Package metrics exposes a store's counters to Prometheus: commits, events
// and log transactions; outbox effects by state; dispatcher activity; the
// writer lease epoch; sync health by tab (state, blocking reason, pending
// effects, oldest pending age, diverged rows). Labels never carry
// spreadsheet ids or cell values.
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
	Health() hikoutei.Health
}

var (
	descCommits      = prometheus.NewDesc("hikoutei_commits_total", "Units of work committed with at least one event.", nil, nil)
	descEvents       = prometheus.NewDesc("hikoutei_events_total", "Events appended by commits.", nil, nil)
	descLogTxns      = prometheus.NewDesc("hikoutei_log_transactions_total", "Log transactions (group commits).", nil, nil)
	descOutbox       = prometheus.NewDesc("hikoutei_outbox_effects", "Effects in the outbox by state.", []string{"state"}, nil)
	descEpoch        = prometheus.NewDesc("hikoutei_lease_epoch", "Writer lease epoch held by this process.", nil, nil)
	descSyncState    = prometheus.NewDesc("hikoutei_sync_state", "Sync health of each tab: 1 for its current state (ok, behind, diverged, blocked), 0 for the others.", []string{"tab", "state"}, nil)
	descSyncBlocked  = prometheus.NewDesc("hikoutei_sync_blocked", "1 for each blocked tab, with the reason code.", []string{"tab", "reason"}, nil)
	descSyncPending  = prometheus.NewDesc("hikoutei_sync_pending", "Effects of the tab not settled yet.", []string{"tab"}, nil)
	descSyncOldest   = prometheus.NewDesc("hikoutei_sync_oldest_pending_seconds", "Age of the tab's oldest pending effect (0: none or unknown).", []string{"tab"}, nil)
	descSyncDiverged = prometheus.NewDesc("hikoutei_sync_diverged_rows", "Rows of the tab that differed from canonical state at the last reconciliation.", []string{"tab"}, nil)
	descDispatch     = prometheus.NewDesc("hikoutei_dispatcher_total", "Dispatcher activity by kind (passes, dispatches, claimed, applied, uncertain, failed, retried, conflicts, probes, superseded, backfilled, repaired, misdirected, notes: cell notes written or removed).", []string{"kind"}, nil)
)

type collector struct{ src Source }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCommits, descEvents, descLogTxns, descOutbox, descEpoch, descDispatch,
		descSyncState, descSyncBlocked, descSyncPending, descSyncOldest, descSyncDiverged} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	collectSync(ch, c.src.Health().SyncHealth)
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

// collectSync emits the sync health gauges, one series per tab.
func collectSync(ch chan<- prometheus.Metric, h *hikoutei.SyncHealth) {
	if h == nil {
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, t := range h.Tabs {
		for _, s := range hikoutei.SyncStates {
			gauge(descSyncState, bool01(t.State == s), t.Tab, string(s))
		}
		if t.State == hikoutei.SyncBlocked {
			gauge(descSyncBlocked, 1, t.Tab, string(t.Reason))
		}
		gauge(descSyncPending, float64(t.Pending), t.Tab)
		gauge(descSyncOldest, t.OldestPending.Seconds(), t.Tab)
		gauge(descSyncDiverged, float64(t.Diverged), t.Tab)
	}
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
