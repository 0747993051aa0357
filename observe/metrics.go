package observe

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Metrics is a prometheus.Collector of one store's series. It is the
// store's Observer (pass it as Options.Observer: commits and Sheets
// requests are measured as they happen) and reads the rest from the
// store it watches at scrape time. Safe for concurrent use.
type Metrics struct {
	commit      prometheus.Histogram
	commitFails *prometheus.CounterVec
	requests    *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	retries     *prometheus.CounterVec
	wakes       *prometheus.CounterVec
	src         atomic.Pointer[sourceBox]
}

// sourceBox holds the watched source (an interface in an atomic pointer).
type sourceBox struct{ Source }

// Metrics implements the store's and the provider's observers.
var (
	_ hikoutei.Observer    = (*Metrics)(nil)
	_ sheetsio.Observer    = (*Metrics)(nil)
	_ prometheus.Collector = (*Metrics)(nil)
)

// New returns Metrics watching no store yet (see Watch).
func New() *Metrics {
	m := &Metrics{
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "hikoutei_commit_duration_seconds",
			Help:    "Time Unit.Commit took, from validation to the read model applying the unit (failed commits included).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		commitFails: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hikoutei_commit_failures_total",
			Help: "Commits that failed, by error code."}, []string{"code"}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "hikoutei_sheets_request_duration_seconds",
			Help:    "Duration of each Sheets API request attempt, by provider method and status class (2xx, 4xx, 5xx, 429, timeout, network).",
			Buckets: prometheus.ExponentialBuckets(0.025, 2, 12)}, []string{"method", "status"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hikoutei_sheets_rate_limited_total",
			Help: "Sheets API requests answered 429 (quota exhausted), by provider method."}, []string{"method"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hikoutei_sheets_retries_total",
			Help: "Sheets API reads retried after a failed attempt, by provider method."}, []string{"method"}),
		wakes: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hikoutei_wake_requests_total",
			Help: "Wake hook requests, by result: polled, scheduled or coalesced when accepted, else the refusal's code."}, []string{"result"}),
	}
	for _, r := range wakehook.Results {
		m.wakes.WithLabelValues(r)
	}
	for _, method := range sheetsio.Methods {
		m.rateLimited.WithLabelValues(method)
		m.retries.WithLabelValues(method)
	}
	return m
}

// Watch makes m read src (usually the *hikoutei.Store) at scrape time;
// a later call replaces it (serve does when a fenced primary reopens as
// a standby). Until then only the hook-fed series and build info are
// served.
func (m *Metrics) Watch(src Source) { m.src.Store(&sourceBox{src}) }

// ObserveCommit implements hikoutei.Observer.
func (m *Metrics) ObserveCommit(d time.Duration, _ int, code string) {
	m.commit.Observe(d.Seconds())
	if code != "" {
		m.commitFails.WithLabelValues(code).Inc()
	}
}

// SheetsRequest implements sheetsio.Observer.
func (m *Metrics) SheetsRequest(method string, status sheetsio.StatusClass, d time.Duration) {
	m.requests.WithLabelValues(method, string(status)).Observe(d.Seconds())
	if status == sheetsio.Status429 {
		m.rateLimited.WithLabelValues(method).Inc()
	}
}

// SheetsRetry implements sheetsio.Observer.
func (m *Metrics) SheetsRetry(method string, _ time.Duration) {
	m.retries.WithLabelValues(method).Inc()
}

// WakeResult counts one wake hook request by its result: pass it as
// hikoutei.WakeHookOptions.OnResult. Results other than the documented
// ones are not counted (the label stays bounded).
func (m *Metrics) WakeResult(result string) {
	if slices.Contains(wakehook.Results, result) {
		m.wakes.WithLabelValues(result).Inc()
	}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.commit.Describe(ch)
	m.commitFails.Describe(ch)
	m.requests.Describe(ch)
	m.rateLimited.Describe(ch)
	m.retries.Describe(ch)
	m.wakes.Describe(ch)
	describeScraped(ch)
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.commit.Collect(ch)
	m.commitFails.Collect(ch)
	m.requests.Collect(ch)
	m.rateLimited.Collect(ch)
	m.retries.Collect(ch)
	m.wakes.Collect(ch)
	collectBuildInfo(ch)
	if b := m.src.Load(); b != nil {
		collectSource(ch, b.Source)
	}
}
