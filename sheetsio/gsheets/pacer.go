package gsheets

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/googleapi"
)

// read runs call as a read-class request: paced by the read limiter and
// retried with capped, jittered exponential backoff honouring Retry-After on
// 408/429/5xx, unstructured errors and transport failures. A structured 4xx
// is returned at once, mapped by readRejected.
func (p *Provider) read(ctx context.Context, op string, call func(context.Context) error) error {
	err := p.readAttempts(ctx, op, call)
	p.failure.note(ctx, err)
	return err
}

// readAttempts is read's retry loop. Each attempt takes the account with
// the most read headroom; an account Google refuses is taken out of the
// pool and the attempt goes to another at once, not counted.
func (p *Provider) readAttempts(ctx context.Context, op string, call func(context.Context) error) error {
	b := p.cfg.Backoff
	turned := sheetsio.TakeReadTurn(ctx)
	for attempt := 0; ; attempt++ {
		a := p.pool.take(classRead, p.cfg.Now())
		if err := a.read.WaitPriority(ctx, readPriority(ctx, turned && attempt == 0)); err != nil {
			return newErr(sheetsio.CodeReadUnavailable, err, "%s: pacing wait", op)
		}
		err := p.readOnce(ctx, a, op, call)
		if err == nil {
			return nil
		}
		if p.refused(a, err) {
			attempt--
			continue
		}
		retry, after := retryableRead(ctx, err)
		if !retry {
			return p.logged(op, p.readRejected(op, err, a.email))
		}
		if attempt+1 >= b.Attempts {
			return p.logged(op, newErr(sheetsio.CodeReadUnavailable, err, "%s: %d attempts failed", op, attempt+1))
		}
		d := p.backoffDelay(attempt, after)
		p.logger().Warn("sheets read retry", "op", op, "attempt", attempt+1, "status", statusOf(err), "class", string(classOf(err)),
			"delay", d, "retry_after", after)
		p.observeRetry(op, d)
		if err := p.cfg.Sleep(ctx, d); err != nil {
			return newErr(sheetsio.CodeReadUnavailable, err, "%s: backoff interrupted", op)
		}
	}
}

// readPriority is the priority of ctx's reads in the read budget: the
// caller's mark (sheetsio.WithReadPriority), normal when unmarked; a
// normal read that takes its worker's read turn (turned,
// sheetsio.WithReadTurn) starts as ratelimit.Turned.
func readPriority(ctx context.Context, turned bool) ratelimit.Priority {
	switch sheetsio.ReadPriority(ctx) {
	case sheetsio.PriorityUrgent:
		return ratelimit.Urgent
	case sheetsio.PriorityBackground:
		return ratelimit.Background
	}
	if turned {
		return ratelimit.Turned
	}
	return ratelimit.Normal
}

// readOnce is one attempt of a read on account a, once a's read budget
// let it start; the budget hears how it was answered.
func (p *Provider) readOnce(ctx context.Context, a *account, op string, call func(context.Context) error) error {
	countRead(ctx)
	err := p.timed(withAccount(ctx, a), op, call)
	observeQuota(a.read, statusOf(err), err == nil)
	if err == nil {
		p.answered(a)
	}
	return err
}

// observeQuota tells the quota budget of a request's class and account
// how the request was answered: a 429 slows every worker of the budget
// (that account's quota is the one exhausted), a success lets it
// recover; other failures say nothing about the quota.
func observeQuota(b *ratelimit.Budget, status int, ok bool) {
	switch {
	case ok:
		b.Observe(ratelimit.Succeeded)
	case status == http.StatusTooManyRequests:
		b.Observe(ratelimit.Throttled)
	}
}

// logged logs how a read failed for good (its code and HTTP status,
// never its cause's text) and returns err. A read abandoned because the
// caller stopped is not logged.
func (p *Provider) logged(op string, err *sheetsio.Error) error {
	if !errors.Is(err, context.Canceled) {
		p.logger().Warn("sheets read failed", "op", op, "code", err.Code, "status", statusOf(err), "class", string(classOf(err.Err)))
	}
	return err
}

// retryableRead reports whether a failed read may be retried and the
// server's Retry-After delay (0 if none).
func retryableRead(ctx context.Context, err error) (bool, time.Duration) {
	if ctx.Err() != nil || credentialsRejected(err) {
		return false, 0
	}
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		return true, 0
	}
	after := retryAfter(gerr.Header)
	structured := gerr.Message != "" || len(gerr.Errors) > 0
	switch {
	case gerr.Code == http.StatusTooManyRequests, gerr.Code == http.StatusRequestTimeout, gerr.Code >= 500:
		return true, after
	case gerr.Code >= 400 && structured:
		return false, 0
	}
	return true, after
}

func retryAfter(h http.Header) time.Duration {
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// backoffDelay is min(Max, Initial·2^attempt) with equal jitter, raised to
// the server's Retry-After when that is longer.
func (p *Provider) backoffDelay(attempt int, after time.Duration) time.Duration {
	b := p.cfg.Backoff
	ceil := float64(b.Initial) * math.Pow(2, float64(attempt))
	ceil = math.Min(ceil, float64(b.Max))
	d := time.Duration(ceil/2 + ceil/2*p.cfg.Jitter())
	return max(d, after)
}

func statusOf(err error) int {
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return gerr.Code
	}
	return 0
}

// readRejected maps a non-retryable read failure to a startup diagnostic.
// who is the e-mail of the account refused ("" unknown).
func (p *Provider) readRejected(op string, err error, who string) *sheetsio.Error {
	if credentialsRejected(err) {
		return newErr(sheetsio.CodeCredentialsRejected, err, "Google rejected the service-account credentials; check the key is current")
	}
	switch statusOf(err) {
	case http.StatusForbidden:
		if who == "" {
			who = "the service account"
		}
		return newErr(sheetsio.CodePermissionDenied, err, "share the spreadsheet with %s (Editor access)", who)
	case http.StatusNotFound:
		return newErr(sheetsio.CodeSpreadsheetNotFound, err, "check the spreadsheet URL; the spreadsheet does not exist or is not visible")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return newErr(sheetsio.CodeReadUnavailable, err, "%s", op)
	}
	return newErr(sheetsio.CodeReadRejected, err, "%s", op)
}

// write runs call once as a write-class request (paced, never retried) and
// classifies its outcome. Pacing failures return a *WriteError whose
// Outcome is Terminal with Code WriteNotSent: nothing left the process.
// The write takes the account with the most write headroom; when Google
// refuses that account (nothing was carried out), it is taken out of the
// pool and the same request goes out at once on another.
func (p *Provider) write(ctx context.Context, op string, call func(context.Context) error) *sheetsio.WriteError {
	for {
		a := p.pool.take(classWrite, p.cfg.Now())
		if err := a.write.Wait(ctx); err != nil {
			return &sheetsio.WriteError{Outcome: sheetsio.NotSent, Code: sheetsio.WriteNotSent, Err: err}
		}
		countWrite(ctx)
		err := p.timed(withAccount(ctx, a), op, call)
		if err != nil && p.refused(a, err) {
			continue
		}
		return p.written(ctx, a, op, ClassifyWrite(err))
	}
}

// written tells a's write budget and the last failure how a write was
// answered, and logs its failure (outcome and code, never its cause).
func (p *Provider) written(ctx context.Context, a *account, op string, werr *sheetsio.WriteError) *sheetsio.WriteError {
	if werr == nil {
		observeQuota(a.write, 0, true)
		p.answered(a)
	} else {
		observeQuota(a.write, werr.Status, false)
	}
	p.failure.note(ctx, asError(werr))
	if werr != nil {
		p.logger().Warn("sheets write failed", "op", op, "outcome", werr.Outcome.String(), "code", werr.Code, "status", werr.Status)
	}
	return werr
}

// attempt runs one HTTP attempt under Config.RequestTimeout.
func (p *Provider) attempt(ctx context.Context, call func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.RequestTimeout)
	defer cancel()
	return httpError(call(ctx))
}

// httpError puts a Google API error under a *sheetsio.HTTPError, so that
// callers read its status (sheetsio.HTTPStatus) and describe it without
// the Google client; errors.As still reaches the *googleapi.Error.
func httpError(err error) error {
	var gerr *googleapi.Error
	var herr *sheetsio.HTTPError
	if err == nil || errors.As(err, &herr) || !errors.As(err, &gerr) {
		return err
	}
	return &sheetsio.HTTPError{Status: gerr.Code, Message: gerr.Message, Err: err}
}

// timed runs one attempt and reports it to the observer.
func (p *Provider) timed(ctx context.Context, op string, call func(context.Context) error) error {
	start := p.cfg.Now()
	err := p.attempt(ctx, call)
	p.observe(op, err, p.cfg.Now().Sub(start))
	return err
}

// asError is werr as an error (nil stays an untyped nil).
func asError(werr *sheetsio.WriteError) error {
	if werr == nil {
		return nil
	}
	return werr
}
