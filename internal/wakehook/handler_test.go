package wakehook

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef-test")

// rig is a handler on a manual clock whose pollers count their wake-ups.
type rig struct {
	t      *testing.T
	clock  *events.ManualClock
	h      *Handler
	polls  atomic.Int64
	polled chan time.Time
	hints  chan Hint // what each poll was woken for
	seq    int
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, clock: events.NewManualClock(time.Unix(1_800_000_000, 0)), polled: make(chan time.Time, 64), hints: make(chan Hint, 64)}
	h, err := NewHandler(Config{Secret: testSecret, Clock: r.clock, MinInterval: 2 * time.Second,
		Poll: func(h Hint) { r.polls.Add(1); r.hints <- h; r.polled <- r.clock.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	return r
}

// nonce is a fresh nonce.
func (r *rig) nonce() string {
	r.seq++
	return fmt.Sprintf("nonce-%016d", r.seq)
}

// send serves one request with the header value hdr and returns the
// status and the body.
func (r *rig) send(hdr string) (int, string) { return r.sendBody(hdr, "") }

// sendBody serves one request with the header value hdr and the body
// body and returns the status and the response's body.
func (r *rig) sendBody(hdr, body string) (int, string) {
	req := httptest.NewRequest(http.MethodPost, "/wake", strings.NewReader(body))
	if hdr != "" {
		req.Header.Set(Header, hdr)
	}
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, req)
	return w.Code, strings.TrimSpace(w.Body.String())
}

// signedNow is a fresh wake signed with the test secret at the clock's now.
func (r *rig) signedNow() string { return Sign(testSecret, r.clock.Now().Unix(), r.nonce()) }

// A forged, stale, replayed or malformed wake is refused with its stable
// code and wakes no poller.
func TestWakeRefusalsAreCodedAndCostNoPoll(t *testing.T) {
	r := newRig(t)
	replayed := r.signedNow()
	if code, body := r.send(replayed); code != http.StatusAccepted || body != `{"result":"polled"}` {
		t.Fatalf("a genuine wake: %d %s", code, body)
	}
	if got := r.polls.Load(); got != 1 {
		t.Fatalf("polls after one genuine wake: %d", got)
	}
	r.clock.Advance(DefaultWindow - time.Second) // past the minimum interval, the first wake still in the window
	now := r.clock.Now().Unix()
	other := []byte("another secret of at least thirty-two bytes")
	cases := []struct {
		name, hdr, code string
		status          int
	}{
		{"missing header", "", "wake_malformed", 400},
		{"garbage", "t=1,n=x", "wake_malformed", 400},
		{"forged with another secret", Sign(other, now, "forged-nonce-000001"), "wake_signature_invalid", 401},
		{"signature of another nonce", strings.Replace(Sign(testSecret, now, "nonce-aaaaaaaaaaaaaaaa"), "n=nonce-aaaaaaaaaaaaaaaa", "n=nonce-bbbbbbbbbbbbbbbb", 1), "wake_signature_invalid", 401},
		{"stale by more than the window", Sign(testSecret, now-int64(DefaultWindow/time.Second)-1, "stale-nonce-0000001"), "wake_stale", 401},
		{"ahead by more than the window", Sign(testSecret, now+int64(DefaultWindow/time.Second)+1, "ahead-nonce-0000001"), "wake_stale", 401},
	}
	for _, c := range cases {
		code, body := r.send(c.hdr)
		if code != c.status || body != `{"error":"`+c.code+`"}` {
			t.Errorf("%s: %d %s, want %d %s", c.name, code, body, c.status, c.code)
		}
	}
	if code, body := r.send(replayed); code != 401 || body != `{"error":"wake_replayed"}` {
		t.Errorf("replayed wake: %d %s", code, body)
	}
	if got := r.polls.Load(); got != 1 {
		t.Fatalf("polls after the refused wakes: %d, want the one genuine wake's", got)
	}
	get := httptest.NewRequest(http.MethodGet, "/wake", nil)
	get.Header.Set(Header, r.signedNow())
	w := httptest.NewRecorder()
	r.h.ServeHTTP(w, get)
	if w.Code != 400 || r.polls.Load() != 1 {
		t.Fatalf("a GET: %d, polls %d", w.Code, r.polls.Load())
	}
}

// A flood of genuine wakes wakes the pollers at most once per minimum
// interval: the first at once, one more when the interval ends for all
// the others, and never two closer than the interval.
func TestWakeFloodPollsAtMostOncePerInterval(t *testing.T) {
	r := newRig(t)
	var results []string
	for range 100 {
		_, body := r.send(r.signedNow())
		results = append(results, body)
	}
	if results[0] != `{"result":"polled"}` || results[1] != `{"result":"scheduled"}` || results[99] != `{"result":"coalesced"}` {
		t.Fatalf("results of a flood: first %s, second %s, last %s", results[0], results[1], results[99])
	}
	first := <-r.polled
	r.clock.Advance(time.Second)
	for range 50 {
		r.send(r.signedNow())
	}
	if got := r.polls.Load(); got != 1 {
		t.Fatalf("polls within the first interval: %d", got)
	}
	r.clock.Advance(time.Second)
	second := <-r.polled // the trailing poll, for the 149 wakes after the first
	if d := second.Sub(first); d < 2*time.Second {
		t.Fatalf("two polls %v apart", d)
	}
	for range 50 {
		r.send(r.signedNow())
	}
	r.clock.Advance(2 * time.Second)
	third := <-r.polled
	if d := third.Sub(second); d < 2*time.Second {
		t.Fatalf("two polls %v apart", d)
	}
	if got := r.polls.Load(); got != 3 {
		t.Fatalf("polls after 250 wakes over two intervals: %d, want 3", got)
	}
}

// The nonce memory is bounded: full of nonces within the window it
// refuses (wake_busy) rather than forget one that could be replayed; it
// forgets the ones whose timestamps left the window.
func TestWakeNonceMemoryIsBounded(t *testing.T) {
	v, err := NewVerifier(testSecret, time.Minute, 2)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	check := func(at time.Time, nonce string) error {
		req, err := ParseHeader(Sign(testSecret, at.Unix(), nonce))
		if err != nil {
			t.Fatal(err)
		}
		return v.Check(at, req)
	}
	for _, n := range []string{"nonce-one-000000001", "nonce-two-000000002"} {
		if err := check(now, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := check(now, "nonce-three-0000003"); !errors.Is(err, ErrBusy) {
		t.Fatalf("a third nonce in a memory of two: %v", err)
	}
	later := now.Add(time.Minute + time.Second)
	if err := check(later, "nonce-three-0000003"); err != nil {
		t.Fatalf("a nonce once the others left the window: %v", err)
	}
}

func TestWakeSecretTooShortIsRefused(t *testing.T) {
	if _, err := NewVerifier([]byte("short"), 0, 0); !errors.Is(err, ErrSecret) {
		t.Fatalf("a short secret: %v", err)
	}
}

// A verified wake that nothing would poll for (a standby, a store whose
// sync does not run) is refused with 503, its code and reason, and
// counted; a forged one still learns only that its signature is invalid.
// Once the store is ready again, wakes poll.
func TestWakeOnAStoreThatWouldNotPollIsRefusedAfterTheSignature(t *testing.T) {
	r := newRig(t)
	var ready atomic.Pointer[NotReady]
	ready.Store(&NotReady{Code: ErrStandby, Reason: "standby"})
	var results []string
	h, err := NewHandler(Config{Secret: testSecret, Clock: r.clock, MinInterval: 2 * time.Second,
		Poll: func(Hint) { r.polls.Add(1) }, Ready: ready.Load, OnResult: func(s string) { results = append(results, s) }})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	forged := Sign([]byte("another secret of at least thirty-two bytes"), r.clock.Now().Unix(), r.nonce())
	if code, body := r.send(forged); code != 401 || body != `{"error":"wake_signature_invalid"}` {
		t.Fatalf("a forged wake to a standby: %d %s", code, body)
	}
	if code, body := r.send(r.signedNow()); code != 503 || body != `{"error":"wake_standby","reason":"standby"}` {
		t.Fatalf("a genuine wake to a standby: %d %s", code, body)
	}
	ready.Store(&NotReady{Code: ErrSyncNotRunning, Reason: "sync_not_provisioned"})
	if code, body := r.send(r.signedNow()); code != 503 || body != `{"error":"wake_sync_not_running","reason":"sync_not_provisioned"}` {
		t.Fatalf("a genuine wake while sync does not run: %d %s", code, body)
	}
	if got := r.polls.Load(); got != 0 {
		t.Fatalf("polls while nothing would poll: %d", got)
	}
	ready.Store(nil)
	if code, body := r.send(r.signedNow()); code != 202 || body != `{"result":"polled"}` || r.polls.Load() != 1 {
		t.Fatalf("a genuine wake once ready: %d %s, polls %d", code, body, r.polls.Load())
	}
	want := []string{"wake_signature_invalid", "wake_standby", "wake_sync_not_running", "polled"}
	if strings.Join(results, " ") != strings.Join(want, " ") {
		t.Fatalf("results %q, want %q", results, want)
	}
	for _, res := range want {
		if !slices.Contains(Results, res) {
			t.Errorf("result %s is not in Results (the metric's label set)", res)
		}
	}
}

// A client without the key that sends a header and never the body it
// announced is answered wake_malformed once the body timeout ends: it
// cannot hold the connection open (the server has no read timeout).
func TestWakeBodyTrickledIsCutOff(t *testing.T) {
	h, err := NewHandler(Config{Secret: testSecret, Clock: events.SystemClock{}, BodyTimeout: 50 * time.Millisecond,
		Poll: func(Hint) { t.Error("a wake whose body never came polled") }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hdr := Sign(testSecret, time.Now().Unix(), "nonce-trickled-000001")
	fmt.Fprintf(conn, "POST /wake HTTP/1.1\r\nHost: x\r\n%s: %s\r\nContent-Length: 100\r\n\r\n{\"sh", Header, hdr)
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // the test's own bound, far past the handler's
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a trickled body: %v", err)
	}
	defer resp.Body.Close()
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 400 || strings.TrimSpace(string(b)) != `{"error":"wake_malformed"}` {
		t.Fatalf("a trickled body: %d %s", resp.StatusCode, b)
	}
}
