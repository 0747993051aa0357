package hikoutei

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// ErrorCode finds the stable code however the error was wrapped, and
// never returns an error's free text (which may name an entity).
func TestErrorCodeIsTheStableCodeNeverTheText(t *testing.T) {
	for want, err := range map[string]error{
		"":                     nil,
		"entity_not_found":     fmt.Errorf("%w: Airport LAX", ErrNotFound),
		"credentials_rejected": fmt.Errorf("sync stopped: %w", &sheetsio.Error{Code: sheetsio.CodeCredentialsRejected, Msg: "key"}),
		"write_rate_limited":   &sheetsio.WriteError{Code: sheetsio.WriteRateLimited},
		"invalid_field_value":  errors.Join(fmt.Errorf("field x of Airport LAX: %w", ErrInvalidValue), errors.New("other")),
		"error":                errors.New("Airport LAX is broken"),
		"sync_not_provisioned": fmt.Errorf("%w: spreadsheet not provisioned yet: %w", ErrSyncNotProvisioned, errors.New("dial tcp: connection refused")),
		"spreadsheet_not_found": fmt.Errorf("%w: spreadsheet not provisioned yet: %w", ErrSyncNotProvisioned,
			&sheetsio.Error{Code: sheetsio.CodeSpreadsheetNotFound, Msg: "gone"}),
	} {
		if got := ErrorCode(err); got != want {
			t.Errorf("ErrorCode(%v) = %q, want %q", err, got, want)
		}
	}
}

// countingObserver counts commits.
type countingObserver struct{ n int }

func (c *countingObserver) ObserveCommit(time.Duration, int, string) { c.n++ }

// BenchmarkCommitInstrumentationOff is what instrumentation adds to a
// commit when no Observer and no tracer provider are set (the global
// no-op tracer).
func BenchmarkCommitInstrumentationOff(b *testing.B) {
	s := &Store{tracer: tracer(nil)}
	b.ReportAllocs()
	for b.Loop() {
		s.instrument(ctx, 1).end(CommitResult{Events: 2}, nil)
	}
}

// BenchmarkCommitInstrumentationObserved adds an Observer.
func BenchmarkCommitInstrumentationObserved(b *testing.B) {
	s := &Store{tracer: tracer(nil), observer: &countingObserver{}}
	b.ReportAllocs()
	for b.Loop() {
		s.instrument(ctx, 1).end(CommitResult{Events: 2}, nil)
	}
}
