package aggregates

import "errors"

// Sentinel errors of the aggregates package (stable snake_case codes).
var (
	// ErrEntityNotFound: a remove targets an entity that does not exist.
	ErrEntityNotFound = errors.New("entity_not_found")
	// ErrInvalidValue: a field value has no canonical form (NaN, ±Inf,
	// invalid UTF-8, out-of-range time); wraps the events canonical error.
	ErrInvalidValue = errors.New("invalid_field_value")
	// ErrInvalidCommand: a command lacks its entity name or id.
	ErrInvalidCommand = errors.New("invalid_command")
)
