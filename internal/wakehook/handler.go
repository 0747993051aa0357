package wakehook

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"
)

// Config configures a Handler.
type Config struct {
	// Secret is the shared HMAC key (at least MinSecretBytes).
	Secret []byte
	// Clock is read for the timestamp window and the minimum interval.
	Clock Clock
	// Poll wakes the pollers for the tabs the wakes it carries named
	// (AllTabs: every tab); it must not block.
	Poll func(Hint)
	// Ready, when set, says whether a verified wake would start a poll
	// now: nil, or why not (a *NotReady). It is asked after the request
	// verified, so a caller without the key learns nothing; it must not
	// block.
	Ready func() *NotReady
	// MinInterval is the least time between two polls that wakes start
	// (default DefaultMinInterval); Window and MaxNonces as NewVerifier.
	MinInterval time.Duration
	Window      time.Duration
	MaxNonces   int
	// OnResult, when set, hears every request's result: an Outcome, or a
	// refusal's code (wake_malformed, wake_signature_invalid, …).
	OnResult func(result string)
	// BodyTimeout bounds the time reading a wake's body may take (default
	// DefaultBodyTimeout): the body is read before the signature can be
	// checked, so a client without the key must not hold it open.
	BodyTimeout time.Duration
}

// DefaultBodyTimeout is Config.BodyTimeout's default.
const DefaultBodyTimeout = 5 * time.Second

// NotReady is why a verified wake would start no poll (Config.Ready):
// the handler answers 503 {"error": code, "reason": reason}.
type NotReady struct {
	// Code is ErrStandby or ErrSyncNotRunning.
	Code error
	// Reason is a stable snake_case code naming the cause, e.g.
	// writer_displaced, sync_not_provisioned.
	Reason string
}

func (n *NotReady) Error() string { return n.Code.Error() + ": " + n.Reason }

// Unwrap makes errors.Is(n, ErrStandby) and the like work.
func (n *NotReady) Unwrap() error { return n.Code }

// Handler serves wake requests: 202 with {"result": outcome} when
// accepted, else the refusal's status and {"error": code}. It never logs.
type Handler struct {
	v        *Verifier
	g        *gate
	clock    Clock
	ready    func() *NotReady
	onResult func(string)
	bodyWait time.Duration
}

// NewHandler builds a handler. Errors: ErrSecret.
func NewHandler(c Config) (*Handler, error) {
	v, err := NewVerifier(c.Secret, c.Window, c.MaxNonces)
	if err != nil {
		return nil, err
	}
	if c.Clock == nil || c.Poll == nil {
		return nil, errors.New("wakehook: Clock and Poll are required")
	}
	if c.MinInterval <= 0 {
		c.MinInterval = DefaultMinInterval
	}
	on := c.OnResult
	if on == nil {
		on = func(string) {}
	}
	ready := c.Ready
	if ready == nil {
		ready = func() *NotReady { return nil }
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	return &Handler{v: v, g: &gate{interval: c.MinInterval, clock: c.Clock, poll: c.Poll}, clock: c.Clock, ready: ready,
		onResult: on, bodyWait: c.BodyTimeout}, nil
}

// ServeHTTP verifies the request and, when it is accepted, wakes the
// pollers through the gate.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A server that cannot set deadlines (a test's recorder) reads as it may.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.bodyWait))
	out, err := h.wake(r)
	if err != nil {
		h.onResult(code(err))
		refuse(w, err)
		return
	}
	h.onResult(string(out))
	reply(w, http.StatusAccepted, map[string]string{"result": string(out)})
}

// wake is one request's verdict.
func (h *Handler) wake(r *http.Request) (Outcome, error) {
	if r.Method != http.MethodPost {
		return "", ErrMalformed
	}
	vals := r.Header.Values(Header)
	if len(vals) != 1 {
		return "", ErrMalformed
	}
	req, err := ParseHeader(vals[0])
	if err != nil {
		return "", ErrMalformed
	}
	if req.Body, err = readBody(r); err != nil {
		return "", ErrMalformed
	}
	hint, err := ParseBody(req.Body)
	if err != nil {
		return "", ErrMalformed
	}
	if err := h.v.Check(h.clock.Now(), req); err != nil {
		return "", err
	}
	if n := h.ready(); n != nil {
		return "", n
	}
	return h.g.wake(hint), nil
}

// readBody reads a wake's body: at most maxBody bytes (ErrMalformed past
// that).
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(b) > maxBody {
		return nil, ErrMalformed
	}
	return b, nil
}

// refuse answers a refusal with its status and code (and, when nothing
// would poll, the reason).
func refuse(w http.ResponseWriter, err error) {
	var n *NotReady
	if errors.As(err, &n) {
		reply(w, http.StatusServiceUnavailable, map[string]string{"error": n.Code.Error(), "reason": n.Reason})
		return
	}
	status := http.StatusUnauthorized
	switch {
	case errors.Is(err, ErrMalformed):
		status = http.StatusBadRequest
	case errors.Is(err, ErrBusy):
		status = http.StatusServiceUnavailable
	}
	reply(w, status, map[string]string{"error": err.Error()})
}

func reply(w http.ResponseWriter, status int, body map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body) // a client that went away needs nothing more
}

// code is a refusal's code (without a NotReady's reason: the result
// label stays bounded).
func code(err error) string {
	var n *NotReady
	if errors.As(err, &n) {
		return n.Code.Error()
	}
	return err.Error()
}
