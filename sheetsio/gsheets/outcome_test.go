package gsheets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"google.golang.org/api/googleapi"
)

func TestI24_ClassifyWrite(t *testing.T) {
	syntax := json.Unmarshal([]byte("<html>"), &struct{}{}) // a real *json.SyntaxError
	cases := []struct {
		name    string
		err     error
		outcome sheetsio.Outcome
		code    string
	}{
		{"timeout", fmt.Errorf("do: %w", context.DeadlineExceeded), sheetsio.Uncertain, sheetsio.WriteTimeout},
		{"dropped", &url.Error{Op: "Post", URL: "x", Err: io.EOF}, sheetsio.Uncertain, sheetsio.WriteConnectionLost},
		{"not json", syntax, sheetsio.Uncertain, sheetsio.WriteResponseNotJSON},
		{"html 502", &googleapi.Error{Code: 502, Body: "<html>"}, sheetsio.Uncertain, sheetsio.WriteServerError},
		{"404", &googleapi.Error{Code: 404, Message: "Requested entity was not found."}, sheetsio.Uncertain, sheetsio.WriteNotFound},
		{"429", &googleapi.Error{Code: 429, Message: "Quota exceeded"}, sheetsio.Uncertain, sheetsio.WriteRateLimited},
		{"503", &googleapi.Error{Code: 503, Message: "The service is currently unavailable."}, sheetsio.Uncertain, sheetsio.WriteServerError},
		{"400 unstructured", &googleapi.Error{Code: 400, Body: "bad"}, sheetsio.Uncertain, sheetsio.WriteResponseNotJSON},
		{"400 structured", &googleapi.Error{Code: 400, Message: "Invalid requests[0]"}, sheetsio.Terminal, sheetsio.WriteRejected},
		{"403 structured", &googleapi.Error{Code: 403, Message: "The caller does not have permission"}, sheetsio.Terminal, sheetsio.WriteRejected},
		{"413", &googleapi.Error{Code: 413, Body: "too big"}, sheetsio.Terminal, sheetsio.WritePayloadTooLarge},
		{"400 size", &googleapi.Error{Code: 400, Message: "Request payload size exceeds the limit: 10485760 bytes."}, sheetsio.Terminal, sheetsio.WritePayloadTooLarge},
		{"unknown", errors.New("boom"), sheetsio.Uncertain, sheetsio.WriteUnknown},
	}
	for _, c := range cases {
		w := ClassifyWrite(c.err)
		if w == nil || w.Outcome != c.outcome || w.Code != c.code {
			t.Fatalf("%s: got %+v, want %s/%s", c.name, w, c.outcome, c.code)
		}
		var target *sheetsio.WriteError
		if !errors.As(error(w), &target) {
			t.Fatalf("%s: errors.As failed", c.name)
		}
		sentinel := map[sheetsio.Outcome]error{sheetsio.Uncertain: sheetsio.ErrWriteUncertain, sheetsio.Terminal: sheetsio.ErrWriteTerminal}[c.outcome]
		if !errors.Is(w, sentinel) {
			t.Fatalf("%s: errors.Is(%v) false", c.name, sentinel)
		}
	}
	if ClassifyWrite(nil) != nil {
		t.Fatal("nil error must classify as applied (nil)")
	}
}
