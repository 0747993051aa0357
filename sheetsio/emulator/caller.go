package emulator

import (
	"net/http"
	"strings"
)

// A caller is the Google user a request comes from, as the emulator tells
// them apart: the bearer token of its Authorization header (a service
// account's access token), or "" for a request without one. Google's
// per-user quota and a spreadsheet's sharing are per caller. Callers are
// test fixtures: their tokens are no secret.

// Caller returns an HTTP client whose requests carry "Authorization:
// Bearer token": one Google user of the emulator, with its own per-user
// quota (Options.Quota) and sharing (Unshare, Revoke). Give it to the
// Sheets client (option.WithHTTPClient, gsheets.Account.HTTPClient).
func Caller(token string) *http.Client {
	return &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
}

// bearer adds the caller's token to each request.
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip sends a copy of r carrying the token.
func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// callerOf is the bearer token of r ("" without one).
func callerOf(r *http.Request) string {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return ""
	}
	return strings.TrimSpace(tok)
}

// Unshare makes every API request of caller (a bearer token, see Caller)
// for spreadsheetID answer 403 PERMISSION_DENIED, as Google does for a
// spreadsheet not shared with that service account; other callers are
// served. It lasts until Share. Not saved by Save.
func (e *Emulator) Unshare(spreadsheetID, caller string) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.unshared[spreadsheetID+"\x00"+caller] = true
}

// Share lifts an Unshare.
func (e *Emulator) Share(spreadsheetID, caller string) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	delete(e.unshared, spreadsheetID+"\x00"+caller)
}

// Revoke makes every API request of caller answer 401 UNAUTHENTICATED, as
// Google does once a service account's key is deleted or the account
// disabled. It lasts until Reinstate. Not saved by Save.
func (e *Emulator) Revoke(caller string) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.revoked[caller] = true
}

// Reinstate lifts a Revoke.
func (e *Emulator) Reinstate(caller string) {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	delete(e.revoked, caller)
}

// CallerCounters returns the API requests received from caller (a bearer
// token; "" for requests without one), over every spreadsheet, including
// those refused.
func (e *Emulator) CallerCounters(caller string) Counters {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	if c, ok := e.callers[caller]; ok {
		return *c
	}
	return Counters{}
}

// admitCaller counts a request of caller for spreadsheetID and returns
// the refusal it gets (nil: served): 401 for a revoked caller, 403 for a
// spreadsheet denied to everyone (Deny) or not shared with the caller.
func (e *Emulator) admitCaller(spreadsheetID, caller string, write bool) *apiFailure {
	e.ctl.Lock()
	defer e.ctl.Unlock()
	e.countCaller(caller, write)
	switch {
	case e.revoked[caller]:
		return unauthenticated()
	case spreadsheetID != "" && (e.denied[spreadsheetID] || e.unshared[spreadsheetID+"\x00"+caller]):
		return permissionDenied()
	}
	return nil
}

// maxCallers bounds the callers counted: tokens are the client's choice.
const maxCallers = 1024

// countCaller counts one request of caller (the first maxCallers callers
// only).
func (e *Emulator) countCaller(caller string, write bool) {
	c := e.callers[caller]
	if c == nil {
		if len(e.callers) >= maxCallers {
			return
		}
		c = &Counters{}
		e.callers[caller] = c
	}
	if write {
		c.Writes++
	} else {
		c.Reads++
	}
}

// unauthenticated is Google's answer to a request whose credentials it
// does not accept.
func unauthenticated() *apiFailure {
	return &apiFailure{err: errorf(ErrUnauthenticated, "Request had invalid authentication credentials. "+
		"Expected OAuth 2 access token, login cookie or other valid authentication credential.")}
}
