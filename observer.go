package hikoutei

import (
	"context"
	"errors"
	"regexp"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Observer hears of the store's operations as they happen, for metrics:
// package observe implements it (and sheetsio.Observer, which the store
// passes on to its sync provider). Calls must be cheap and must not
// block: they run on the caller's path.
type Observer interface {
	// ObserveCommit: Unit.Commit returned after d, having appended events
	// (0 when nothing changed); code is "" on success, else the error's
	// stable code.
	ObserveCommit(d time.Duration, events int, code string)
}

// Span names (docs/metrics.md "Tracing"). Attributes are counts and stable codes,
// never ids, spreadsheet ids or values.
const (
	SpanCommit   = "hikoutei.commit"   // Unit.Commit: validation, the group commit, projection
	SpanDispatch = "hikoutei.dispatch" // one batch of effects sent to the spreadsheet
	SpanPoll     = "hikoutei.poll"     // one poll of the Input tabs
)

// tracerName is the instrumentation scope of the store's spans.
const tracerName = "github.com/hikoutei/hikoutei-go"

// tracer is the store's tracer: from Options.TracerProvider, else the
// global provider (a no-op until the application installs one).
func tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(tracerName)
}

// commitTrace is the timing and the span of one commit.
type commitTrace struct {
	s        *Store
	start    time.Time
	span     trace.Span
	entities int
}

// instrument starts the timing and the span of one commit (end ends them).
func (s *Store) instrument(ctx context.Context, entities int) commitTrace {
	_, span := s.tracer.Start(ctx, SpanCommit)
	return commitTrace{s: s, start: time.Now(), span: span, entities: entities}
}

// end reports the commit to the observer and ends its span.
func (c commitTrace) end(res CommitResult, err error) {
	var code string
	if err != nil {
		code = ErrorCode(err)
	}
	if o := c.s.observer; o != nil {
		o.ObserveCommit(time.Since(c.start), res.Events, code)
	}
	if c.span.IsRecording() {
		c.span.SetAttributes(attribute.Int("hikoutei.entities", c.entities), attribute.Int("hikoutei.events", res.Events))
		if code != "" {
			c.span.SetAttributes(attribute.String("hikoutei.error", code))
			c.span.SetStatus(codes.Error, code)
		}
	}
	c.span.End()
}

// snakeCode matches a stable error code.
var snakeCode = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)+$`)

// ErrorCode is the stable snake_case code of err ("" for nil): the code
// of the first Sheets error in its chain (e.g. credentials_rejected),
// else the innermost wrapped error whose text is such a code (every
// sentinel of the API), else "error". It never carries ids or values,
// so it may be logged, traced and used as a metric label.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var se *sheetsio.Error
	var we *sheetsio.WriteError
	switch {
	case errors.As(err, &se):
		return se.Code
	case errors.As(err, &we):
		return we.Code
	}
	code := "error"
	for e := err; e != nil; e = unwrapFirst(e) {
		if snakeCode.MatchString(e.Error()) {
			code = e.Error()
		}
	}
	return code
}

// unwrapFirst unwraps one level, following the first of joined errors.
func unwrapFirst(err error) error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if errs := j.Unwrap(); len(errs) > 0 {
			return errs[0]
		}
		return nil
	}
	return errors.Unwrap(err)
}
