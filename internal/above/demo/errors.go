package demo

import "errors"

// Sentinel errors of the demo (stable snake_case codes).
var (
	// ErrStalled: a wait saw no progress (read-model checkpoint, outbox
	// counts by state, the acts' observed outcomes) for Config.Stall.
	ErrStalled = errors.New("demo_stalled")
	// ErrUnexpectedOutcome: a person act reached an outcome outside its
	// set of correct outcomes.
	ErrUnexpectedOutcome = errors.New("demo_unexpected_outcome")
	// ErrMismatches: the sheet differs from canonical state after the run.
	ErrMismatches = errors.New("demo_mismatches")
)
