package sheetsio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"google.golang.org/api/googleapi"
)

// Outcome classifies a remote mutation (I24, seed 001 "Failure model").
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

// ClassifyWrite turns the error of a write call into a *WriteError; nil
// stays nil (Applied). Only a structured JSON 4xx other than 404/408/429 is
// Terminal (413 and size-related 400s get Code WritePayloadTooLarge);
// everything else is Uncertain.
func ClassifyWrite(err error) *WriteError {
	if err == nil {
		return nil
	}
	var gerr *googleapi.Error
	if errors.As(err, &gerr) {
		return classifyStatus(gerr, err)
	}
	return &WriteError{Outcome: Uncertain, Code: transportCode(err), Err: err}
}

func classifyStatus(gerr *googleapi.Error, err error) *WriteError {
	w := &WriteError{Outcome: Uncertain, Status: gerr.Code, Err: err}
	structured := gerr.Message != "" || len(gerr.Errors) > 0
	switch {
	case gerr.Code == http.StatusRequestEntityTooLarge || (gerr.Code == http.StatusBadRequest && sizeMessage(gerr.Message)):
		w.Outcome, w.Code = Terminal, WritePayloadTooLarge
	case gerr.Code == http.StatusNotFound:
		w.Code = WriteNotFound
	case gerr.Code == http.StatusTooManyRequests:
		w.Code = WriteRateLimited
	case gerr.Code >= 500:
		w.Code = WriteServerError
	case gerr.Code >= 400 && gerr.Code < 500 && gerr.Code != http.StatusRequestTimeout && structured:
		w.Outcome, w.Code = Terminal, WriteRejected
	case !structured:
		w.Code = WriteResponseNotJSON
	default:
		w.Code = WriteUnknown
	}
	return w
}

func sizeMessage(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "payload size") || strings.Contains(m, "too large") || strings.Contains(m, "request entity")
}

func transportCode(err error) string {
	var nerr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &nerr) && nerr.Timeout():
		return WriteTimeout
	case isJSONDecodeError(err):
		return WriteResponseNotJSON
	case isConnectionError(err):
		return WriteConnectionLost
	}
	return WriteUnknown
}

func isJSONDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

func isConnectionError(err error) bool {
	var oe *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &oe)
}
