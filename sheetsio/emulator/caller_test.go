package emulator

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"
)

// callerClient is the real sheets/v4 client of one caller (bearer token).
func callerClient(t *testing.T, url, token string) *sheets.Service {
	t.Helper()
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(url), option.WithHTTPClient(Caller(token)))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Google's per-user quota is per caller: each bearer token spends its
// own, and a request without one spends "default"'s.
func TestQuotaPerCaller(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	emu := New(Options{Quota: &Quota{ReadsPerUser: 2}, Clock: clock})
	_ = emu.CreateSpreadsheet("b", "")
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	a, b := callerClient(t, srv.URL, "sa-a"), callerClient(t, srv.URL, "sa-b")
	for i := range 2 {
		if _, err := a.Spreadsheets.Values.Get("b", "A1").Do(); err != nil {
			t.Fatalf("caller a, read %d: %v", i, err)
		}
	}
	if _, err := a.Spreadsheets.Values.Get("b", "A1").Do(); apiCode(t, err) != 429 {
		t.Fatalf("caller a's third read: %v, want 429", err)
	}
	for i := range 2 {
		if _, err := b.Spreadsheets.Values.Get("b", "A1").Do(); err != nil {
			t.Fatalf("caller b has a quota of its own, read %d: %v", i, err)
		}
	}
	if got := emu.CallerCounters("sa-a"); got.Reads != 3 || got.Writes != 0 {
		t.Fatalf("caller a's counters %+v, want 3 reads", got)
	}
	if got := emu.CallerCounters("sa-b"); got.Reads != 2 {
		t.Fatalf("caller b's counters %+v, want 2 reads", got)
	}
}

// A spreadsheet not shared with a caller answers it 403 and serves the
// others; a revoked caller gets 401 everywhere; both are lifted.
func TestUnshareAndRevokeOneCaller(t *testing.T) {
	emu := New(Options{})
	_ = emu.CreateSpreadsheet("b", "")
	_ = emu.CreateSpreadsheet("c", "")
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	a, b := callerClient(t, srv.URL, "sa-a"), callerClient(t, srv.URL, "sa-b")
	emu.Unshare("b", "sa-a")
	if _, err := a.Spreadsheets.Get("b").Do(); apiCode(t, err) != 403 {
		t.Fatalf("unshared caller: %v, want 403", err)
	}
	if _, err := a.Spreadsheets.Get("c").Do(); err != nil {
		t.Fatalf("another spreadsheet stays shared: %v", err)
	}
	if _, err := b.Spreadsheets.Get("b").Do(); err != nil {
		t.Fatalf("another caller is served: %v", err)
	}
	emu.Share("b", "sa-a")
	if _, err := a.Spreadsheets.Get("b").Do(); err != nil {
		t.Fatalf("shared again: %v", err)
	}
	emu.Revoke("sa-b")
	for _, id := range []string{"b", "c"} {
		if _, err := b.Spreadsheets.Get(id).Do(); apiCode(t, err) != 401 {
			t.Fatalf("revoked caller on %s: %v, want 401", id, err)
		}
	}
	emu.Reinstate("sa-b")
	if _, err := b.Spreadsheets.Get("b").Do(); err != nil {
		t.Fatalf("reinstated: %v", err)
	}
}
