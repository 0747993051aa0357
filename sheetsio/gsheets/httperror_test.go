package gsheets

import (
	"errors"
	"fmt"
	"testing"

	"google.golang.org/api/googleapi"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// A Google API error leaves the provider under a *sheetsio.HTTPError, so
// the engine reads its status without the Google client, while errors.As
// still reaches the *googleapi.Error; other errors pass unchanged.
func TestGoogleAPIErrorsReachCallersAsHTTPErrors(t *testing.T) {
	gerr := &googleapi.Error{Code: 429, Message: "Quota exceeded"}
	err := httpError(fmt.Errorf("call: %w", gerr))
	var herr *sheetsio.HTTPError
	if !errors.As(err, &herr) || herr.Status != 429 || herr.Message != "Quota exceeded" || sheetsio.HTTPStatus(err) != 429 {
		t.Fatalf("httpError = %#v", err)
	}
	var back *googleapi.Error
	if !errors.As(err, &back) || back != gerr {
		t.Fatalf("the *googleapi.Error is not reachable under %v", err)
	}
	if again := httpError(err); again != err {
		t.Fatalf("a wrapped error was wrapped again: %v", again)
	}
	plain := errors.New("connection reset")
	if httpError(plain) != plain || httpError(nil) != nil {
		t.Fatal("an error without an HTTP answer was changed")
	}
	if werr := ClassifyWrite(gerr); sheetsio.HTTPStatus(werr) != 429 || werr.Code != sheetsio.WriteRateLimited {
		t.Fatalf("ClassifyWrite(429) = %v (status %d)", werr, sheetsio.HTTPStatus(werr))
	}
}
