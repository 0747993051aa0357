package emulator

import (
	"errors"
	"fmt"
)

// Error is an emulator error. Code is a stable snake_case identifier; the
// HTTP fields say how the REST surface reports it (Google's error body:
// {"error":{"code","message","status","errors":[{message,domain,reason}]}}).
// errors.Is matches any *Error with the same Code as a sentinel below.
type Error struct {
	Code       string
	HTTPStatus int
	Status     string // google.rpc code name, e.g. INVALID_ARGUMENT
	Reason     string // errors[0].reason, e.g. badRequest
	Message    string
}

// Error implements error. Messages name ranges and tabs, never cell data.
func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Code + ": " + e.Message
}

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Sentinels, one per failure class. Compare with errors.Is.
var (
	// ErrNotFound: unknown spreadsheet or entity (HTTP 404 NOT_FOUND).
	ErrNotFound = &Error{Code: "emulator_not_found", HTTPStatus: 404, Status: "NOT_FOUND", Reason: "notFound"}
	// ErrPermissionDenied: the spreadsheet is not shared with the caller (HTTP 403
	// PERMISSION_DENIED "The caller does not have permission"); see Emulator.Deny.
	ErrPermissionDenied = &Error{Code: "emulator_permission_denied", HTTPStatus: 403, Status: "PERMISSION_DENIED", Reason: "forbidden"}
	// ErrUnauthenticated: the caller's credentials are refused (HTTP 401
	// UNAUTHENTICATED); see Emulator.Revoke.
	ErrUnauthenticated = &Error{Code: "emulator_unauthenticated", HTTPStatus: 401, Status: "UNAUTHENTICATED", Reason: "authError"}
	// ErrExists: CreateSpreadsheet with an id already in use.
	ErrExists = &Error{Code: "emulator_already_exists", HTTPStatus: 409, Status: "ALREADY_EXISTS", Reason: "alreadyExists"}
	// ErrInvalidArgument: a malformed or invalid request (HTTP 400 INVALID_ARGUMENT).
	ErrInvalidArgument = &Error{Code: "emulator_invalid_argument", HTTPStatus: 400, Status: "INVALID_ARGUMENT", Reason: "badRequest"}
	// ErrRangeParse: "Unable to parse range: …" (HTTP 400), also for unknown tabs.
	ErrRangeParse = &Error{Code: "emulator_range_parse_failed", HTTPStatus: 400, Status: "INVALID_ARGUMENT", Reason: "badRequest"}
	// ErrGridLimits: "Range (…) exceeds grid limits. Max rows: N, max columns: M" (HTTP 400).
	ErrGridLimits = &Error{Code: "emulator_grid_limits_exceeded", HTTPStatus: 400, Status: "INVALID_ARGUMENT", Reason: "badRequest"}
	// ErrUnknownRequest: a batchUpdate request kind or endpoint the emulator does not know (HTTP 400).
	ErrUnknownRequest = &Error{Code: "emulator_unknown_request", HTTPStatus: 400, Status: "INVALID_ARGUMENT", Reason: "badRequest"}
	// ErrQuotaExceeded: the quota model rejected the request (HTTP 429 RESOURCE_EXHAUSTED).
	ErrQuotaExceeded = &Error{Code: "emulator_quota_exceeded", HTTPStatus: 429, Status: "RESOURCE_EXHAUSTED", Reason: "rateLimitExceeded"}
	// ErrPayloadTooLarge: the request body is over Options.MaxRequestBytes
	// (HTTP 400, as Google answers a body over its limit).
	ErrPayloadTooLarge = &Error{Code: "emulator_payload_too_large", HTTPStatus: 400, Status: "INVALID_ARGUMENT", Reason: "badRequest"}
	// ErrForeignHost: the Host header does not name the emulator (a DNS
	// rebinding attempt, or a name missing from Options.AllowedHosts); HTTP 403.
	ErrForeignHost = &Error{Code: "emulator_foreign_host", HTTPStatus: 403, Status: "PERMISSION_DENIED", Reason: "forbidden"}
	// ErrForeignOrigin: the Origin header is another site's (or "null"): a
	// cross-site request from a web page; HTTP 403.
	ErrForeignOrigin = &Error{Code: "emulator_foreign_origin", HTTPStatus: 403, Status: "PERMISSION_DENIED", Reason: "forbidden"}
	// ErrUnsupportedMediaType: a POST/PUT/PATCH/DELETE whose Content-Type is
	// not application/json (a form or text/plain a web page can send
	// cross-site without asking); HTTP 415.
	ErrUnsupportedMediaType = &Error{Code: "emulator_unsupported_media_type", HTTPStatus: 415, Status: "INVALID_ARGUMENT", Reason: "unsupportedMediaType"}
	// ErrInjected: a scripted or random fault answered instead of the API.
	ErrInjected = &Error{Code: "emulator_injected_fault", HTTPStatus: 503, Status: "UNAVAILABLE", Reason: "backendError"}
	// ErrState: Load was given a state document it cannot use.
	ErrState = &Error{Code: "emulator_state_invalid", HTTPStatus: 500, Status: "INTERNAL", Reason: "internalError"}
)

// errorf derives an error of the sentinel's class with a formatted message.
func errorf(sentinel *Error, format string, args ...any) *Error {
	e := *sentinel
	e.Message = fmt.Sprintf(format, args...)
	return &e
}

// asAPIError maps any error to the *Error the REST surface reports.
func asAPIError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return errorf(ErrInvalidArgument, "%s", err.Error())
}
