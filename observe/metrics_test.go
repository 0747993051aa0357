package observe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/observe"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

type airport struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
}

var ctx = context.Background()

// open opens a store in a new directory measured by m (sync to sheet
// when not nil) and watched by m.
func open(t *testing.T, m *observe.Metrics, sheet *hikouteitest.Sheet) *hikoutei.Store {
	t.Helper()
	o := hikoutei.Options{Clock: events.NewManualClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)), HeartbeatInterval: -1,
		AcquireWait: -1, Observer: m, NATS: &hikoutei.NATSOptions{Disabled: true}}
	if sheet != nil {
		o.Sync = sheet.SyncOptions()
	}
	s, err := hikoutei.Open(t.Context(), t.TempDir(), o, hikoutei.Entity[airport]("Airport"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	m.Watch(s)
	return s
}

func commit(t *testing.T, s *hikoutei.Store, a airport) {
	t.Helper()
	u := s.Begin()
	if err := u.Persist(&a); err != nil {
		t.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// gather scrapes m through a registry of its own.
func gather(t *testing.T, m *observe.Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(m)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// value is the value of the series of family name whose labels include
// want ("k=v" pairs); -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for _, kv := range want {
			k, v, _ := strings.Cut(kv, "=")
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

// Every series passes Prometheus's own linter (naming, units, _total on
// counters, help text), and the pedantic registry accepts the collector
// (consistent descriptors).
func TestSeriesFollowPrometheusNamingRules(t *testing.T) {
	m := observe.New()
	s := open(t, m, nil)
	commit(t, s, airport{ID: "LAX", Name: "Los Angeles"})
	problems, err := testutil.CollectAndLint(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	gather(t, m)
}

// A local-only store reports its commits, the commit latency, every
// outbox state (zeros included), no lag, no conflict, no quarantine, and
// build info.
func TestMetricsOfALocalStore(t *testing.T) {
	m := observe.New()
	s := open(t, m, nil)
	commit(t, s, airport{ID: "LAX", Name: "Los Angeles"})
	commit(t, s, airport{ID: "SFO", Name: "San Francisco"})
	fams := gather(t, m)
	for name, want := range map[string]float64{"hikoutei_commit_duration_seconds": 2, "hikoutei_commits_total": 2,
		"hikoutei_read_model_lag_events": 0, "hikoutei_conflicts_open": 0, "hikoutei_quarantine_active": 0,
		"hikoutei_outbox_oldest_pending_seconds": 0, "hikoutei_build_info": 1} {
		if got := value(fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	for _, state := range aggregates.EffectStates {
		if got := value(fams, "hikoutei_outbox_effects", "state="+string(state)); got != 0 {
			t.Errorf("outbox %s = %v, want a 0 series", state, got)
		}
	}
	if value(fams, "hikoutei_build_info", "goversion="+strings.TrimSpace(runtimeVersion())) != 1 {
		t.Errorf("build info without the Go version: %v", fams["hikoutei_build_info"])
	}
}

// Sheets requests are measured by method and status class: a read
// answered 429 counts in the histogram's 429 class, in the rate-limited
// counter and, retried, in the retry counter; the dispatcher's activity
// is split into passes, batches and effect outcomes.
func TestSheetsRequestsAndDispatchAreMeasured(t *testing.T) {
	m := observe.New()
	sheet := hikouteitest.NewSheet(t)
	s := open(t, m, sheet)
	h := hikouteitest.New(t, s)
	commit(t, s, airport{ID: "LAX", Name: "Los Angeles"})
	sheet.Emulator.ScriptFaults(emulator.Fault{Kind: emulator.Fault429, Match: emulator.MatchReads, RetryAfter: time.Millisecond})
	h.Drain(ctx)
	// The first rows after provisioning go out blind (no read); the
	// reconciliation's read of the tab meets the scripted 429.
	if _, err := h.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	fams := gather(t, m)
	for _, c := range []struct {
		name   string
		labels []string
	}{
		{"hikoutei_sheets_request_duration_seconds", []string{"status=429"}},
		{"hikoutei_sheets_request_duration_seconds", []string{"status=2xx", "method=batch_update"}},
		{"hikoutei_dispatcher_passes_total", nil},
		{"hikoutei_dispatcher_batches_total", nil},
		{"hikoutei_dispatcher_effect_outcomes_total", []string{"outcome=applied"}},
	} {
		if got := value(fams, c.name, c.labels...); got < 1 {
			t.Errorf("%s%v = %v, want at least 1", c.name, c.labels, got)
		}
	}
	var limited, retried float64
	for _, mm := range fams["hikoutei_sheets_rate_limited_total"].GetMetric() {
		limited += mm.Counter.GetValue()
	}
	for _, mm := range fams["hikoutei_sheets_retries_total"].GetMetric() {
		retried += mm.Counter.GetValue()
	}
	if limited != 1 || retried != 1 {
		t.Errorf("rate limited %v, retried %v; want 1 and 1", limited, retried)
	}
	// The 429 counts against the read budget, which is unpaced here
	// (rate 0), and is in the health report too.
	if r, w := value(fams, "hikoutei_sheets_quota_throttled_total", "class=read"), value(fams, "hikoutei_sheets_quota_throttled_total", "class=write"); r != 1 || w != 0 {
		t.Errorf("quota 429s: read %v, write %v; want 1 and 0", r, w)
	}
	if r := value(fams, "hikoutei_sheets_quota_rate", "class=read"); r != 0 {
		t.Errorf("unpaced read budget at %v requests a second, want 0", r)
	}
	if q := observe.Report(s.Health()).SyncHealth.Quota; q == nil || q.ReadThrottled != 1 {
		t.Errorf("health report quota %+v, want 1 read 429", q)
	}
	if fams["hikoutei_dispatcher_total"] != nil {
		t.Error("the mixed hikoutei_dispatcher_total series is still served")
	}
}
