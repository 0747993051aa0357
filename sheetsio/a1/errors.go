package a1

import "errors"

// Error is a typed A1-notation error. Code is a stable snake_case identifier;
// Input is the offending text (a range or a column label, never cell data).
// Errors compare equal under errors.Is to the sentinel with the same Code.
type Error struct {
	Code   string
	Input  string
	Reason string
}

// Error implements error as "code: reason (input)".
func (e *Error) Error() string {
	msg := e.Code
	if e.Reason != "" {
		msg += ": " + e.Reason
	}
	if e.Input != "" {
		msg += " (" + e.Input + ")"
	}
	return msg
}

// Is reports whether target is an *Error with the same Code, so that
// errors.Is(err, ErrParse) matches every parse failure.
func (e *Error) Is(target error) bool {
	var t *Error
	if !errors.As(target, &t) {
		return false
	}
	return t.Code == e.Code
}

// Sentinels. Compare with errors.Is; inspect details with errors.As(*Error).
var (
	// ErrParse: the text is not valid A1 notation (code a1_parse_failed).
	ErrParse = &Error{Code: "a1_parse_failed"}
	// ErrColumn: a column label or index is out of range (code a1_column_invalid).
	ErrColumn = &Error{Code: "a1_column_invalid"}
	// ErrRow: a row number is out of range (code a1_row_invalid).
	ErrRow = &Error{Code: "a1_row_invalid"}
	// ErrGrid: a range does not fit the grid it is bounded to (code a1_exceeds_grid).
	ErrGrid = &Error{Code: "a1_exceeds_grid"}
)

func newErr(sentinel *Error, input, reason string) error {
	return &Error{Code: sentinel.Code, Input: input, Reason: reason}
}
