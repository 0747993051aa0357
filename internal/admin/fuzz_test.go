package admin_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hikoutei/hikoutei-go/internal/admin"
)

// FuzzAdminRequest: any bytes decode to a valid request or to a typed
// error, never a panic; a decoded request re-encodes to one that decodes
// the same.
func FuzzAdminRequest(f *testing.F) {
	for _, s := range []string{`{"v":1,"op":"status"}`, `{"v":1,"op":"conflicts.ack","body":{"conflict_id":"c"}}`, `{"v":2}`, `[]`, `{"v":1,"op":""}`,
		`{"v":1,"op":"x","body":null}`, "\x00", `{"v":1e400}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := admin.DecodeRequest(b)
		if err != nil {
			if !errors.Is(err, admin.ErrMalformedRequest) && !errors.Is(err, admin.ErrVersionUnsupported) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if r.Version != admin.Version || r.Op == "" {
			t.Fatalf("accepted %+v", r)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := admin.DecodeRequest(again)
		if err != nil || r2.Op != r.Op {
			t.Fatalf("round trip %q: %+v %v", again, r2, err)
		}
	})
}
