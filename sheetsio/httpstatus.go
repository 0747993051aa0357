package sheetsio

import (
	"errors"
	"fmt"
	"net/http"
)

// HTTPError is an HTTP answer of the Sheets API that failed: a Client
// reports it as (or under) the cause of its errors so that callers read
// the status without knowing the client library. Message is the API's own
// message (it may echo cell data: it is left out of Error() for a 400);
// Err is the client library's error, which errors.As still reaches.
type HTTPError struct {
	Status  int
	Message string
	Err     error
}

// Error renders the status and, except for a 400, the API's message.
func (e *HTTPError) Error() string {
	if e.Message != "" && e.Status != http.StatusBadRequest {
		return fmt.Sprintf("http %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("http %d", e.Status)
}

// Unwrap returns the client library's error.
func (e *HTTPError) Unwrap() error { return e.Err }

// HTTPStatus is the HTTP status of the Sheets API answer err carries
// (0 when it carries none: a transport failure, a timeout, or no error).
func HTTPStatus(err error) int {
	var herr *HTTPError
	if errors.As(err, &herr) {
		return herr.Status
	}
	return 0
}
