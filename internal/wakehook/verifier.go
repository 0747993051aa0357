package wakehook

import (
	"crypto/hmac"
	"fmt"
	"sync"
	"time"
)

// Verifier defaults.
const (
	// DefaultWindow is how far a signed timestamp may be from now, either
	// way (Google's clocks and ours are both NTP-synchronised).
	DefaultWindow = 5 * time.Minute
	// DefaultMaxNonces bounds the nonce memory: at most this many wakes
	// are accepted per window.
	DefaultMaxNonces = 4096
)

// Verifier decides whether a parsed wake is genuine and new: the
// signature, then the timestamp's window, then the nonce memory. Safe for
// concurrent use.
type Verifier struct {
	secret []byte
	window time.Duration

	mu     sync.Mutex
	nonces nonces
}

// NewVerifier verifies with secret (at least MinSecretBytes); window and
// maxNonces ≤ 0 take the defaults. Errors: ErrSecret.
func NewVerifier(secret []byte, window time.Duration, maxNonces int) (*Verifier, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("%w: %d bytes, want at least %d", ErrSecret, len(secret), MinSecretBytes)
	}
	if window <= 0 {
		window = DefaultWindow
	}
	if maxNonces <= 0 {
		maxNonces = DefaultMaxNonces
	}
	return &Verifier{secret: append([]byte(nil), secret...), window: window,
		nonces: nonces{max: maxNonces, seen: map[string]int64{}}}, nil
}

// Check accepts r (its body included) at now or says why not: ErrSignature, ErrStale,
// ErrReplayed, ErrBusy. Only a request that verifies is remembered, so a
// forger cannot fill the memory.
func (v *Verifier) Check(now time.Time, r Request) error {
	if !hmac.Equal(mac(v.secret, r.Unix, r.Nonce, r.Body), r.Sig) {
		return ErrSignature
	}
	if d := now.Sub(time.Unix(r.Unix, 0)); d > v.window || d < -v.window {
		return ErrStale
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.nonces.add(r.Nonce, r.Unix, now.Add(-v.window).Unix())
}
