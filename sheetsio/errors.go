package sheetsio

import (
	"errors"
	"fmt"
	"net/url"
)

// Stable error codes carried by *Error. Startup diagnostics use the first
// group; runtime failures the second.
const (
	CodeInvalidSpreadsheetURL = "invalid_spreadsheet_url"
	CodeCredentialsMissing    = "credentials_missing"
	CodeCredentialsNotJSON    = "credentials_not_json"
	CodeCredentialsIncomplete = "credentials_incomplete"
	CodeCredentialsRejected   = "credentials_rejected"
	CodePermissionDenied      = "sheet_permission_denied"
	CodeSpreadsheetNotFound   = "spreadsheet_not_found"
	CodeSyncStartupFailed     = "sync_startup_failed"
	CodeInvalidConfig         = "invalid_config"

	CodeReadUnavailable  = "sheets_read_unavailable"
	CodeReadRejected     = "sheets_read_rejected"
	CodeHeaderDrift      = "sheet_header_drift"
	CodeTabMissing       = "sheet_tab_missing"
	CodeTabChanged       = "sheet_tab_changed"
	CodeAuthorityStale   = "authority_stale"
	CodeAuthorityForeign = "authority_store_mismatch"
	CodeAuthorityInvalid = "authority_malformed"
	CodeInvalidBatch     = "invalid_batch"
	CodeReceiptAmbiguous = "receipt_ambiguous"
	CodeReceiptMalformed = "receipt_malformed"
	// CodeSpreadsheetCapacity: the rows a write adds would pass
	// MaxSpreadsheetCells; nothing of the tab's was sent (OpResult.Reason
	// of a StatusBlocked op, or the Code of a NotSent *WriteError when
	// Sheets itself refused the growth).
	CodeSpreadsheetCapacity = "spreadsheet_capacity"
)

// Error is the provider's typed error: Code is one of the Code* constants,
// Msg a human diagnostic that never contains credentials, spreadsheet ids or
// cell payloads, Err the wrapped cause (may be nil; Error() renders it
// sanitised, errors.As still reaches it, e.g. the client library's own HTTP error under an *HTTPError). errors.Is(err, ErrX)
// matches by Code against the sentinels below.
type Error struct {
	Code string
	Msg  string
	Err  error
}

// Error implements error; the text carries codes and positions, never payloads.
func (e *Error) Error() string {
	s := "sheetsio: " + e.Code
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + describeCause(e.Err)
	}
	return s
}

// describeCause renders a cause without anything that could identify the
// spreadsheet or carry cell data: HTTP failures become their status, and a
// transport *url.Error loses its URL (which contains the spreadsheet id).
func describeCause(err error) string {
	var herr *HTTPError
	if errors.As(err, &herr) {
		return herr.Error()
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Op + ": " + describeCause(uerr.Err)
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Error()
	}
	return err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error with the same Code (the sentinels).
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.Msg == "" && t.Err == nil
}

// Sentinels for errors.Is; each matches every *Error carrying its Code.
var (
	ErrInvalidSpreadsheetURL = &Error{Code: CodeInvalidSpreadsheetURL}
	ErrCredentialsMissing    = &Error{Code: CodeCredentialsMissing}
	ErrCredentialsNotJSON    = &Error{Code: CodeCredentialsNotJSON}
	ErrCredentialsIncomplete = &Error{Code: CodeCredentialsIncomplete}
	ErrCredentialsRejected   = &Error{Code: CodeCredentialsRejected}
	ErrPermissionDenied      = &Error{Code: CodePermissionDenied}
	ErrSpreadsheetNotFound   = &Error{Code: CodeSpreadsheetNotFound}
	ErrSyncStartupFailed     = &Error{Code: CodeSyncStartupFailed}
	ErrInvalidConfig         = &Error{Code: CodeInvalidConfig}
	ErrReadUnavailable       = &Error{Code: CodeReadUnavailable}
	ErrReadRejected          = &Error{Code: CodeReadRejected}
	ErrHeaderDrift           = &Error{Code: CodeHeaderDrift}
	ErrTabMissing            = &Error{Code: CodeTabMissing}
	ErrTabChanged            = &Error{Code: CodeTabChanged}
	ErrAuthorityStale        = &Error{Code: CodeAuthorityStale}
	ErrAuthorityForeign      = &Error{Code: CodeAuthorityForeign}
	ErrAuthorityInvalid      = &Error{Code: CodeAuthorityInvalid}
	ErrInvalidBatch          = &Error{Code: CodeInvalidBatch}
	ErrReceiptAmbiguous      = &Error{Code: CodeReceiptAmbiguous}
	ErrReceiptMalformed      = &Error{Code: CodeReceiptMalformed}
)

// Write outcome sentinels: errors.Is(err, ErrWriteUncertain) is true for a
// *WriteError whose Outcome is Uncertain, likewise ErrWriteTerminal.
var (
	ErrWriteUncertain = errors.New("write_uncertain")
	ErrWriteTerminal  = errors.New("write_rejected")
)

// CodeOf is the stable code of a provider error (*Error or *WriteError;
// "" for any other error).
func CodeOf(err error) string {
	var e *Error
	var we *WriteError
	switch {
	case errors.As(err, &e):
		return e.Code
	case errors.As(err, &we):
		return we.Code
	}
	return ""
}

func newErr(code string, cause error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Err: cause}
}
