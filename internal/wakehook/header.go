package wakehook

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Header is the request header that carries a signed wake.
const Header = "X-Hikoutei-Wake"

// Nonce and header bounds.
const (
	minNonce  = 16
	maxNonce  = 64
	maxHeader = 256
)

// Request is a parsed wake header: the signed timestamp (Unix seconds),
// the nonce and the signature, and the request's body (signed with them
// when not empty).
type Request struct {
	Unix  int64
	Nonce string
	Sig   []byte
	Body  []byte
}

// ParseHeader parses "t=<unix>,n=<nonce>,s=<64 hex digits>" (the three
// keys once each, in any order, nothing else). The nonce is 16–64 of
// A–Z a–z 0–9 '-' '_'. Errors: ErrMalformed.
func ParseHeader(v string) (Request, error) {
	if v == "" || len(v) > maxHeader {
		return Request{}, fmt.Errorf("%w: header missing or longer than %d bytes", ErrMalformed, maxHeader)
	}
	var r Request
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || seen[k] {
			return Request{}, fmt.Errorf("%w: want t=…,n=…,s=…", ErrMalformed)
		}
		seen[k] = true
		if err := r.set(k, val); err != nil {
			return Request{}, err
		}
	}
	if !seen["t"] || !seen["n"] || !seen["s"] {
		return Request{}, fmt.Errorf("%w: want t=…,n=…,s=…", ErrMalformed)
	}
	return r, nil
}

// set assigns one key of the header.
func (r *Request) set(k, val string) error {
	switch k {
	case "t":
		return r.setUnix(val)
	case "n":
		if !validNonce(val) {
			return fmt.Errorf("%w: nonce must be %d–%d of A-Z a-z 0-9 - _", ErrMalformed, minNonce, maxNonce)
		}
		r.Nonce = val
		return nil
	case "s":
		sig, err := hex.DecodeString(val)
		if err != nil || len(sig) != 32 {
			return fmt.Errorf("%w: signature must be 64 hex digits", ErrMalformed)
		}
		r.Sig = sig
		return nil
	}
	return fmt.Errorf("%w: unknown key", ErrMalformed)
}

// setUnix parses the timestamp: 1–12 decimal digits.
func (r *Request) setUnix(val string) error {
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil || len(val) > 12 || n < 0 || strconv.FormatInt(n, 10) != val {
		return fmt.Errorf("%w: timestamp must be Unix seconds", ErrMalformed)
	}
	r.Unix = n
	return nil
}

func validNonce(s string) bool {
	if len(s) < minNonce || len(s) > maxNonce {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
