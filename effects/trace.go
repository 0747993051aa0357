package effects

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Span names of the workers (docs/metrics.md "Tracing"). Their attributes are
// counts and codes: never ids, spreadsheet ids or cell values.
const (
	SpanDispatch = "hikoutei.dispatch" // one batch sent to the spreadsheet
	SpanPoll     = "hikoutei.poll"     // one adaptive poll of the Input tabs
)

// startSpan starts a span on tracer (nil: no tracing).
func startSpan(ctx context.Context, tracer trace.Tracer, name string) (context.Context, trace.Span) {
	if tracer == nil {
		return ctx, noop.Span{}
	}
	return tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient))
}

// endDispatch ends a dispatch span with the batch's effects and outcomes.
func endDispatch(span trace.Span, effects int, out []Settlement, err error) {
	if span.IsRecording() {
		applied := 0
		for _, s := range out {
			if s.Outcome.Kind == aggregates.OutcomeApplied {
				applied++
			}
		}
		span.SetAttributes(attribute.Int("hikoutei.effects", effects), attribute.Int("hikoutei.applied", applied))
		endErr(span, err)
	}
	span.End()
}

// endPoll ends a poll span with what the poll read and found.
func endPoll(span trace.Span, res PollResult, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("hikoutei.tabs", res.Tabs), attribute.Int("hikoutei.certified", res.Certified),
			attribute.Int("hikoutei.escalated", res.Escalated))
		endErr(span, err)
	}
	span.End()
}

// endErr marks the span failed with the error's stable code only (an
// error's text may name an entity).
func endErr(span trace.Span, err error) {
	if err == nil {
		return
	}
	code := "error"
	var se *sheetsio.Error
	var we *sheetsio.WriteError
	switch {
	case errors.As(err, &se):
		code = se.Code
	case errors.As(err, &we):
		code = we.Code
	case errors.Is(err, ErrDisplaced):
		code = "writer_displaced"
	}
	span.SetAttributes(attribute.String("hikoutei.error", code))
	span.SetStatus(codes.Error, code)
}
