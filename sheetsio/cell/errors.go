package cell

import (
	"errors"
	"fmt"
)

// Reason codes carried by MalformedError and EncodeError. They are stable
// snake_case strings: evidence rows and quarantine records store them verbatim.
const (
	// ReasonTypeMismatch: the cell's JSON type is not the one the column's kind
	// is written as (C01: the number 123 in a text column).
	ReasonTypeMismatch = "cell_type_mismatch"
	// ReasonNotExactInteger: a number in an integer column that is fractional or
	// beyond ±2^53, so it cannot be proven to be the exact int64 (C02).
	ReasonNotExactInteger = "cell_not_exact_integer"
	// ReasonNonCanonicalInteger: text in an integer column that is not the
	// canonical decimal form of an int64 ("+5", "05", " 5", "1e3").
	ReasonNonCanonicalInteger = "cell_noncanonical_integer"
	// ReasonEdgeWhitespace: text with leading or trailing white space in a key
	// column (C11: " 00123").
	ReasonEdgeWhitespace = "cell_edge_whitespace"
	// ReasonNonFinite: NaN or ±Inf (encode of a float, or a non-finite number read).
	ReasonNonFinite = "cell_non_finite"
	// ReasonOutOfRange: a time outside years 0001–9999 or a serial number that
	// maps outside it.
	ReasonOutOfRange = "cell_out_of_range"
	// ReasonTooLong: text longer than the Sheets limit of 50,000 characters.
	ReasonTooLong = "cell_too_long"
	// ReasonFormula: the cell holds a formula the system never writes; its
	// computed result must not be imported (C03).
	ReasonFormula = "cell_formula"
	// ReasonErrorValue: the cell holds a spreadsheet error (#REF!, #N/A, …).
	ReasonErrorValue = "cell_error_value"
	// ReasonMerged: the cell is part of a merged range.
	ReasonMerged = "cell_merged"
	// ReasonDateText: text in a time column that is not one of the date
	// forms adoption accepts (ParseDateText); polling never reads text
	// there (it is ReasonTypeMismatch).
	ReasonDateText = "cell_date_text"
	// ReasonUnsupportedValue: a Go value or JSON value the codec has no mapping
	// for (for example a struct, or an int64 handed to a string column).
	ReasonUnsupportedValue = "cell_unsupported_value"
)

// ErrMalformed is matched (errors.Is) by every *MalformedError: a cell read
// from a sheet that cannot be decoded into its column's declared kind.
var ErrMalformed = errors.New("cell_malformed")

// ErrUnencodable is matched (errors.Is) by every *EncodeError: a Go value that
// must not be committed/written (NaN, ±Inf, wrong type, too long).
var ErrUnencodable = errors.New("cell_unencodable")

// MalformedError reports a cell that fails strict decoding. Reason is one of
// the Reason* constants; Column is the header name when known (DecodeRow sets
// it); Index is the zero-based column position, or -1 when unknown. It never
// carries the cell's payload, so it is safe to log.
type MalformedError struct {
	Reason string
	Kind   Kind
	Column string
	Index  int
}

// Error implements error; the text carries codes and positions, never payloads.
func (e *MalformedError) Error() string {
	if e.Column != "" {
		return fmt.Sprintf("cell: malformed %s cell in column %q (#%d): %s", e.Kind, e.Column, e.Index, e.Reason)
	}
	return fmt.Sprintf("cell: malformed %s cell: %s", e.Kind, e.Reason)
}

// Is makes errors.Is(err, ErrMalformed) true.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

// EncodeError reports a Go value that cannot be written to a column of Kind.
// Reason is one of the Reason* constants. It carries no payload.
type EncodeError struct {
	Reason string
	Kind   Kind
}

// Error implements error; the text carries codes and positions, never payloads.
func (e *EncodeError) Error() string {
	return fmt.Sprintf("cell: cannot encode value for %s column: %s", e.Kind, e.Reason)
}

// Is makes errors.Is(err, ErrUnencodable) true.
func (e *EncodeError) Is(target error) bool { return target == ErrUnencodable }

func malformed(k Kind, reason string) error {
	return &MalformedError{Reason: reason, Kind: k, Index: -1}
}

func unencodable(k Kind, reason string) error { return &EncodeError{Reason: reason, Kind: k} }
