package gsheets

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// hooks is the provider's observer and, when Config.Logger was nil, the
// logger a store lent it.
type hooks struct {
	obs atomic.Pointer[sheetsio.Observer]
	log atomic.Pointer[slog.Logger] // nil: Config.Logger stands
}

// Adopt lends the provider a store's logger and observer: the logger
// only when Config.Logger was nil (gsync.SyncFromEnv builds providers without
// one), the observer when h has one. A provider shared by several
// stores logs and reports to the last one that adopted it. Safe while
// requests run.
func (p *Provider) Adopt(h sheetsio.Hooks) {
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
func classOf(err error) sheetsio.StatusClass {
	if err == nil {
		return sheetsio.Status2xx
	}
	s := statusOf(err)
	if s == 0 {
		s = tokenRefused(err)
	}
	switch {
	case s == http.StatusTooManyRequests:
		return sheetsio.Status429
	case s >= 500:
		return sheetsio.Status5xx
	case s >= 400:
		return sheetsio.Status4xx
	case s >= 200 && s < 400:
		return sheetsio.Status2xx
	}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) && nerr.Timeout() {
		return sheetsio.StatusTimeout
	}
	return sheetsio.StatusNetwork
}
