package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/api/option"
	sheets "google.golang.org/api/sheets/v4"
)

// guarded is an emulator with one spreadsheet behind a real HTTP server.
type guarded struct {
	emu     *Emulator
	srv     *httptest.Server
	host    string // the server's host:port
	initial string // the saved state before any request
}

func newGuarded(t *testing.T, opts Options) *guarded {
	t.Helper()
	emu := New(opts)
	if err := emu.CreateSpreadsheet("book", "t"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	g := &guarded{emu: emu, srv: srv, host: u.Host}
	g.initial = g.state(t)
	return g
}

// request sends method path with body through a real HTTP client; edit
// sets headers (and may change req.Host).
func (g *guarded) request(t *testing.T, method, path, body string, edit func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, g.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(req)
	}
	resp, err := g.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// untouched requires that no request reached the spreadsheets: the
// state is as created and no request was counted.
func (g *guarded) untouched(t *testing.T) {
	t.Helper()
	if now := g.state(t); now != g.initial || g.emu.Counters("book") != (Counters{}) {
		t.Fatalf("a refused request reached the emulator: counters %+v, state\n%s", g.emu.Counters("book"), now)
	}
}

func (g *guarded) state(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := g.emu.Save(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// wantGoogleError requires Google's error body with code status and the
// google.rpc status name.
func wantGoogleError(t *testing.T, what string, code int, body string, status int, rpc string) {
	t.Helper()
	var doc struct {
		Error struct {
			Code    int    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if code != status || json.Unmarshal([]byte(body), &doc) != nil || doc.Error.Code != status || doc.Error.Status != rpc ||
		doc.Error.Message == "" || len(doc.Error.Errors) != 1 {
		t.Fatalf("%s: %d %s, want %d %s in Google's error shape", what, code, body, status, rpc)
	}
}

const appendPath = "/v4/spreadsheets/book/values/Sheet1!A1:append?valueInputOption=RAW"
const appendBody = `{"values":[["planted"]]}`

func contentType(ct string) func(*http.Request) {
	return func(r *http.Request) {
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
	}
}

func TestRepro11_NonJSONWritesAreRefused(t *testing.T) {
	g := newGuarded(t, Options{})
	for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "", "application/json; charset=latin1", "application/jsonx", "json"} {
		for _, call := range []struct{ method, path string }{
			{http.MethodPost, appendPath},
			{http.MethodPut, "/v4/spreadsheets/book/values/Sheet1!A1?valueInputOption=RAW"},
			{http.MethodPost, "/v4/spreadsheets/book:batchUpdate"},
			{http.MethodPost, "/v4/spreadsheets/book/values:batchClear"},
			{http.MethodPost, "/v4/spreadsheets"},
		} {
			code, body := g.request(t, call.method, call.path, appendBody, contentType(ct))
			wantGoogleError(t, call.method+" "+call.path+" as "+ct, code, body, http.StatusUnsupportedMediaType, "INVALID_ARGUMENT")
		}
	}
	g.untouched(t)
	if ids := g.emu.SpreadsheetIDs(); len(ids) != 1 {
		t.Fatalf("a refused create made a spreadsheet: %v", ids)
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; charset=UTF-8"} {
		if code, body := g.request(t, http.MethodPost, appendPath, appendBody, contentType(ct)); code != http.StatusOK {
			t.Fatalf("%s: %d %s", ct, code, body)
		}
	}
}

func TestRepro11_ForeignOriginsAreRefused(t *testing.T) {
	g := newGuarded(t, Options{})
	for _, origin := range []string{"http://evil.example", "https://evil.example", "null", "http://" + g.host + ".evil.example",
		"http://localhost.evil.example:1", "file://", "http://127.0.0.1:1", "chrome-extension://abc", "http://user@" + g.host} {
		edit := func(r *http.Request) {
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Origin", origin)
		}
		code, body := g.request(t, http.MethodPost, appendPath, appendBody, edit)
		wantGoogleError(t, "write from "+origin, code, body, http.StatusForbidden, "PERMISSION_DENIED")
		code, body = g.request(t, http.MethodGet, "/v4/spreadsheets/book", "", edit)
		wantGoogleError(t, "read from "+origin, code, body, http.StatusForbidden, "PERMISSION_DENIED")
	}
	g.untouched(t)
	sameOrigin := func(r *http.Request) {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Origin", "http://"+g.host)
	}
	if code, body := g.request(t, http.MethodPost, appendPath, appendBody, sameOrigin); code != http.StatusOK {
		t.Fatalf("same origin: %d %s", code, body)
	}
}

// TestRepro11_ForeignHostsAreRefused is DNS rebinding: a page whose name
// now resolves to the emulator's address sends its own name as Host. Its
// reads (API and HTML view) are refused as well as its writes.
func TestRepro11_ForeignHostsAreRefused(t *testing.T) {
	g := newGuarded(t, Options{AllowedHosts: []string{"fake-sheets"}})
	_, port, _ := net.SplitHostPort(g.host)
	for _, host := range []string{"evil.example:" + port, "evil.example", "0.0.0.0:" + port, "127.0.0.1.evil.example:" + port,
		"localhost.evil.example", "[::]:" + port, "fake-sheets.evil.example"} {
		edit := func(r *http.Request) { r.Header.Set("Content-Type", "application/json"); r.Host = host }
		for _, call := range []struct{ method, path, body string }{
			{http.MethodPost, appendPath, appendBody}, {http.MethodGet, "/v4/spreadsheets/book", ""},
			{http.MethodGet, "/view/book/0", ""}, {http.MethodGet, "/", ""},
		} {
			code, body := g.request(t, call.method, call.path, call.body, edit)
			wantGoogleError(t, call.method+" "+call.path+" Host "+host, code, body, http.StatusForbidden, "PERMISSION_DENIED")
			if strings.Contains(body, "book") || strings.Contains(body, "Sheet1") {
				t.Fatalf("Host %s: the refusal leaks the spreadsheet: %s", host, body)
			}
		}
	}
	g.untouched(t)
	for _, host := range []string{g.host, "localhost:" + port, "LOCALHOST", "app.localhost:" + port, "[::1]:" + port, "127.0.0.2", "fake-sheets:" + port, "Fake-Sheets."} {
		edit := func(r *http.Request) { r.Header.Set("Content-Type", "application/json"); r.Host = host }
		if code, body := g.request(t, http.MethodPost, appendPath, appendBody, edit); code != http.StatusOK {
			t.Fatalf("Host %s: %d %s", host, code, body)
		}
	}
}

// The Host may also be the IP the connection arrived on (an emulator
// listening on all interfaces, reached by its LAN address).
func TestForeignHostAllowsTheConnectionsLocalIP(t *testing.T) {
	emu := New(Options{})
	req := httptest.NewRequest(http.MethodGet, "http://192.0.2.10:8787/", nil)
	if emu.hostAllowed(req) {
		t.Fatal("a non-loopback IP passed without being the local address")
	}
	local := &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 8787}
	if !emu.hostAllowed(req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, local))) {
		t.Fatal("the connection's own local IP was refused")
	}
}

// The real sheets/v4 client passes the checks on every call Hikoutei
// makes, and on the other writes the emulator serves.
func TestRepro11_RealClientPassesTheChecks(t *testing.T) {
	g := newGuarded(t, Options{})
	svc, err := sheets.NewService(context.Background(), option.WithEndpoint(g.srv.URL), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	vr := func(v string) *sheets.ValueRange { return &sheets.ValueRange{Values: [][]any{{v}}} }
	calls := map[string]func() error{
		"create": func() error {
			_, err := svc.Spreadsheets.Create(&sheets.Spreadsheet{Properties: &sheets.SpreadsheetProperties{Title: "x"}}).Do()
			return err
		},
		"batchUpdate": func() error {
			_, err := svc.Spreadsheets.BatchUpdate("book", &sheets.BatchUpdateSpreadsheetRequest{Requests: []*sheets.Request{
				{AddSheet: &sheets.AddSheetRequest{Properties: &sheets.SheetProperties{Title: "T"}}}}}).Do()
			return err
		},
		"values.update": func() error {
			_, err := svc.Spreadsheets.Values.Update("book", "Sheet1!A1", vr("a")).ValueInputOption("RAW").Do()
			return err
		},
		"values.append": func() error {
			_, err := svc.Spreadsheets.Values.Append("book", "Sheet1!A1", vr("b")).ValueInputOption("RAW").Do()
			return err
		},
		"values.batchUpdate": func() error {
			_, err := svc.Spreadsheets.Values.BatchUpdate("book", &sheets.BatchUpdateValuesRequest{ValueInputOption: "RAW",
				Data: []*sheets.ValueRange{{Range: "Sheet1!B1", Values: [][]any{{"c"}}}}}).Do()
			return err
		},
		"values.clear": func() error {
			_, err := svc.Spreadsheets.Values.Clear("book", "Sheet1!A1", &sheets.ClearValuesRequest{}).Do()
			return err
		},
		"values.batchClear": func() error {
			_, err := svc.Spreadsheets.Values.BatchClear("book", &sheets.BatchClearValuesRequest{Ranges: []string{"Sheet1!B1"}}).Do()
			return err
		},
		"getByDataFilter": func() error {
			_, err := svc.Spreadsheets.GetByDataFilter("book", &sheets.GetSpreadsheetByDataFilterRequest{}).Do()
			return err
		},
		"values.get": func() error { _, err := svc.Spreadsheets.Values.Get("book", "Sheet1!A1:B2").Do(); return err },
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
