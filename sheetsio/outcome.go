package sheetsio

import (
	"fmt"
)

// Outcome classifies a remote mutation (I24).
type Outcome uint8

const (
	// Applied: the server answered 2xx with a well-formed body.
	Applied Outcome = iota + 1
	// Uncertain: nothing proves the write failed (timeout, lost connection,
	// non-JSON body, 404, 429, 5xx, or any unrecognised error). The caller
	// must probe remote postconditions before retrying.
	Uncertain
	// Terminal: the server answered an explicit, structured 4xx rejection;
	// batchUpdate is atomic, so nothing of it was applied.
	Terminal
	// NotSent: the request never left the process (the context ended while
	// waiting for the pacer, or an earlier chunk stopped the dispatch); a
	// retry is safe.
	NotSent
)

// String returns the stable lower-case name of the Outcome.
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Uncertain:
		return "uncertain"
	case Terminal:
		return "terminal"
	case NotSent:
		return "not_sent"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// Write error codes (WriteError.Code).
const (
	WriteTimeout         = "write_timeout"
	WriteConnectionLost  = "write_connection_lost"
	WriteResponseNotJSON = "write_response_not_json"
	WriteNotFound        = "write_not_found"
	WriteRateLimited     = "write_rate_limited"
	WriteServerError     = "write_server_error"
	WriteUnknown         = "write_unknown_error"
	WriteRejected        = "write_rejected"
	WritePayloadTooLarge = "write_payload_too_large"
	WriteNotSent         = "write_not_sent"
	// WriteUnverified: an append-only batchUpdate sent without a
	// preflight read landed, but its own response showed a drifted header
	// or a changed authority (Uncertain: probe it).
	WriteUnverified = "write_unverified"
	// WriteRejectedUnread: Sheets rejected an append-only batchUpdate sent
	// without a preflight read (nothing applied; NotSent: resend after a read).
	WriteRejectedUnread = "write_rejected_unread"
)

// WriteError is the classified failure of one write request. Outcome is
// Uncertain or Terminal; Code one of the Write* constants; Status the HTTP
// status (0 when no response was read); Err the underlying error. Error()
// renders the cause sanitised (no URL, no 400 message that could echo cell
// data); errors.As still reaches the raw cause.
type WriteError struct {
	Outcome Outcome
	Code    string
	Status  int
	Err     error
}

// Error implements error; the text carries codes and positions, never payloads.
func (e *WriteError) Error() string {
	return fmt.Sprintf("sheetsio: write %s (%s, http %d): %s", e.Outcome, e.Code, e.Status, describeCause(e.Err))
}

// Unwrap returns the underlying error.
func (e *WriteError) Unwrap() error { return e.Err }

// Is matches ErrWriteUncertain or ErrWriteTerminal by Outcome.
func (e *WriteError) Is(target error) bool {
	return (target == ErrWriteUncertain && e.Outcome == Uncertain) ||
		(target == ErrWriteTerminal && e.Outcome == Terminal)
}
