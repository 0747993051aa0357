package sheetsio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"testing"

	"google.golang.org/api/googleapi"
)

func TestI24_ClassifyWrite(t *testing.T) {
	syntax := json.Unmarshal([]byte("<html>"), &struct{}{}) // a real *json.SyntaxError
	cases := []struct {
		name    string
		err     error
		outcome Outcome
		code    string
	}{
		{"timeout", fmt.Errorf("do: %w", context.DeadlineExceeded), Uncertain, WriteTimeout},
		{"dropped", &url.Error{Op: "Post", URL: "x", Err: io.EOF}, Uncertain, WriteConnectionLost},
		{"not json", syntax, Uncertain, WriteResponseNotJSON},
		{"html 502", &googleapi.Error{Code: 502, Body: "<html>"}, Uncertain, WriteServerError},
		{"404", &googleapi.Error{Code: 404, Message: "Requested entity was not found."}, Uncertain, WriteNotFound},
		{"429", &googleapi.Error{Code: 429, Message: "Quota exceeded"}, Uncertain, WriteRateLimited},
		{"503", &googleapi.Error{Code: 503, Message: "The service is currently unavailable."}, Uncertain, WriteServerError},
		{"400 unstructured", &googleapi.Error{Code: 400, Body: "bad"}, Uncertain, WriteResponseNotJSON},
		{"400 structured", &googleapi.Error{Code: 400, Message: "Invalid requests[0]"}, Terminal, WriteRejected},
		{"403 structured", &googleapi.Error{Code: 403, Message: "The caller does not have permission"}, Terminal, WriteRejected},
		{"413", &googleapi.Error{Code: 413, Body: "too big"}, Terminal, WritePayloadTooLarge},
		{"400 size", &googleapi.Error{Code: 400, Message: "Request payload size exceeds the limit: 10485760 bytes."}, Terminal, WritePayloadTooLarge},
		{"unknown", errors.New("boom"), Uncertain, WriteUnknown},
	}
	for _, c := range cases {
		w := ClassifyWrite(c.err)
		if w == nil || w.Outcome != c.outcome || w.Code != c.code {
			t.Fatalf("%s: got %+v, want %s/%s", c.name, w, c.outcome, c.code)
		}
		var target *WriteError
		if !errors.As(error(w), &target) {
			t.Fatalf("%s: errors.As failed", c.name)
		}
		sentinel := map[Outcome]error{Uncertain: ErrWriteUncertain, Terminal: ErrWriteTerminal}[c.outcome]
		if !errors.Is(w, sentinel) {
			t.Fatalf("%s: errors.Is(%v) false", c.name, sentinel)
		}
	}
	if ClassifyWrite(nil) != nil {
		t.Fatal("nil error must classify as applied (nil)")
	}
}
