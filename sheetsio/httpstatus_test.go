package sheetsio

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// An HTTP failure under a provider error gives its status to HTTPStatus,
// and its rendering never repeats a 400's message (which may echo cell
// data); the client library's error stays reachable.
func TestHTTPErrorGivesItsStatusAndHidesA400Message(t *testing.T) {
	lib := errors.New("library error")
	denied := &Error{Code: CodePermissionDenied, Err: &HTTPError{Status: 403, Message: "The caller does not have permission", Err: lib}}
	if got := HTTPStatus(fmt.Errorf("poll: %w", denied)); got != 403 {
		t.Fatalf("HTTPStatus = %d, want 403", got)
	}
	if !errors.Is(denied, lib) || !strings.Contains(denied.Error(), "http 403: The caller does not have permission") {
		t.Fatalf("403: %v", denied)
	}
	bad := &WriteError{Outcome: Terminal, Code: WriteRejected, Status: 400, Err: &HTTPError{Status: 400, Message: "Invalid value at 'secret-cell'"}}
	if strings.Contains(bad.Error(), "secret-cell") || !strings.Contains(bad.Error(), "http 400") {
		t.Fatalf("400 rendered as %q", bad.Error())
	}
	if got := HTTPStatus(errors.New("connection reset")); got != 0 {
		t.Fatalf("HTTPStatus of a transport failure = %d, want 0", got)
	}
}
