package config

import (
	"errors"
	"fmt"
)

// Sentinel errors of the configuration. Each carries a stable snake_case
// code as its text; match them with errors.Is.
var (
	// ErrInvalidInterval: an interval variable is not a plain positive
	// decimal integer of milliseconds (I20), or of seconds for
	// HIKOUTEI_SYNC_DIVERGED_BOUND_SECONDS. Its code predates the
	// rate-limit and diverged-bound variables, which share it.
	ErrInvalidInterval = errors.New("invalid_polling_interval")
	// ErrInvalidEndpoint: HIKOUTEI_SHEETS_ENDPOINT is not an absolute
	// http(s) URL with a host.
	ErrInvalidEndpoint = errors.New("invalid_sheets_endpoint")
	// ErrInvalidNATSURL: HIKOUTEI_NATS_URL is not a comma-separated list of
	// nats://, tls://, ws:// or wss:// URLs with a host.
	ErrInvalidNATSURL = errors.New("invalid_nats_url")
	// ErrInvalidReplication: a HIKOUTEI_REPLICATION* variable is unusable
	// (an unknown mode, no HIKOUTEI_NATS_URL, a bad store name or replica
	// count, or a store or replica count without a mode).
	ErrInvalidReplication = errors.New("invalid_replication")
	// ErrInvalidSegmentsURL: HIKOUTEI_SEGMENTS_URL (or --segments) is not
	// a URL with a scheme, or a file URL that is not file:///absolute
	// with no host nor query.
	ErrInvalidSegmentsURL = errors.New("invalid_segments_url")
)

// EnvError names the environment variable a value was refused from. It
// wraps the sentinel (and the problem). Its text never repeats the value,
// which may carry credentials.
type EnvError struct {
	Var string // e.g. HIKOUTEI_NATS_URL
	Err error  // wraps a sentinel above
}

func (e *EnvError) Error() string { return fmt.Sprintf("%s: %v", e.Var, e.Err) }

// Unwrap returns the wrapped problem.
func (e *EnvError) Unwrap() error { return e.Err }

// PublicAs, set once by the root package, lets errors.As find an
// *EnvError as the root package's EnvError (same fields).
var PublicAs func(err error, target any) bool

// As matches the root package's EnvError.
func (e *EnvError) As(target any) bool { return PublicAs != nil && PublicAs(e, target) }
