package sheetsio

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// StatusClass is how one Sheets API request ended, for metrics: the
// HTTP status class of the answer, 429 apart, or timeout / network when
// no answer came.
type StatusClass string

// Status classes.
const (
	Status2xx     StatusClass = "2xx"
	Status4xx     StatusClass = "4xx"
	Status5xx     StatusClass = "5xx"
	Status429     StatusClass = "429"
	StatusTimeout StatusClass = "timeout" // no answer within the attempt's deadline
	StatusNetwork StatusClass = "network" // no answer: refused or lost connection
)

// StatusClasses lists every status class.
var StatusClasses = []StatusClass{Status2xx, Status4xx, Status5xx, Status429, StatusTimeout, StatusNetwork}

// Methods lists the provider's request methods, the method an Observer
// hears: reads check, enumerate, batch_get, batch_get_by_sheet_id,
// grid_get, grid_get_by_sheet_id; writes provision, batch_update.
var Methods = []string{"check", "enumerate", "batch_get", "batch_get_by_sheet_id", "grid_get", "grid_get_by_sheet_id",
	"provision", "batch_update"}

// Observer hears of every HTTP request the provider makes (package
// observe turns them into Prometheus series). Calls must be cheap and
// must not block: they run on the request path.
type Observer interface {
	// SheetsRequest: one attempt of method ended with status after d.
	SheetsRequest(method string, status StatusClass, d time.Duration)
	// SheetsRetry: a failed read of method will be retried after wait.
	SheetsRetry(method string, wait time.Duration)
}

// Hooks are what a store lends a provider built without them (see Adopt).
type Hooks struct {
	Logger   *slog.Logger
	Observer Observer
}

// hooks is the provider's observer and, when Config.Logger was nil, the
// logger a store lent it.
type hooks struct {
	obs atomic.Pointer[Observer]
	log atomic.Pointer[slog.Logger] // nil: Config.Logger stands
}

// Adopt lends the provider a store's logger and observer: the logger
// only when Config.Logger was nil (SyncFromEnv builds providers without
// one), the observer when h has one. A provider shared by several
// stores logs and reports to the last one that adopted it. Safe while
// requests run.
func (p *Provider) Adopt(h Hooks) {
	if h.Logger != nil && p.cfg.Logger == discard {
		p.hooks.log.Store(h.Logger)
	}
	if h.Observer != nil {
		p.hooks.obs.Store(&h.Observer)
	}
}

// discard is the logger of a provider configured without one.
var discard = slog.New(slog.DiscardHandler)

// logger is the logger to report through.
func (p *Provider) logger() *slog.Logger {
	if l := p.hooks.log.Load(); l != nil {
		return l
	}
	return p.cfg.Logger
}

// observe reports one request attempt to the observer, if any.
func (p *Provider) observe(method string, err error, d time.Duration) {
	if o := p.hooks.obs.Load(); o != nil {
		(*o).SheetsRequest(method, classOf(err), d)
	}
}

// observeRetry reports a read retry to the observer, if any.
func (p *Provider) observeRetry(method string, wait time.Duration) {
	if o := p.hooks.obs.Load(); o != nil {
		(*o).SheetsRetry(method, wait)
	}
}

// classOf is the status class of one attempt's outcome.
func classOf(err error) StatusClass {
	if err == nil {
		return Status2xx
	}
	s := statusOf(err)
	if s == 0 {
		s = tokenRefused(err)
	}
	switch {
	case s == http.StatusTooManyRequests:
		return Status429
	case s >= 500:
		return Status5xx
	case s >= 400:
		return Status4xx
	case s >= 200 && s < 400:
		return Status2xx
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout() {
		return StatusTimeout
	}
	return StatusNetwork
}
