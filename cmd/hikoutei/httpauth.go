package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// minHTTPToken is the shortest bearer token serve accepts.
const minHTTPToken = 16

// httpAccess is how serve --http protects its port: a bearer token, or
// nothing on a loopback address.
type httpAccess struct {
	addr  string
	token string // "" = loopback-only, no token
}

// mode names the protection for the log line.
func (a httpAccess) mode() string {
	if a.token != "" {
		return "bearer-token"
	}
	return "loopback-only"
}

// checkHTTPAccess validates --http ADDR and HIKOUTEI_HTTP_TOKEN before
// anything is opened: ADDR must be host:port with a port 0–65535; a
// non-loopback host (an empty host listens on every interface) needs the
// token. Errors are usage errors (exit 2).
func checkHTTPAccess(addr string, lookup func(string) (string, bool)) (httpAccess, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return httpAccess{}, usageError{fmt.Errorf(`flag "--http": %q is not host:port`, addr)}
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || strconv.FormatUint(n, 10) != port {
		return httpAccess{}, usageError{fmt.Errorf(`flag "--http": port %q is not a number from 0 to 65535`, port)}
	}
	token, _ := lookup(config.EnvHTTPToken)
	switch {
	case token != "" && len(token) < minHTTPToken:
		return httpAccess{}, usageError{fmt.Errorf("%s is shorter than %d characters", config.EnvHTTPToken, minHTTPToken)}
	case token == "" && !loopbackHost(host):
		return httpAccess{}, usageError{errors.New(`flag "--http": ` + addr + " is not a loopback address: set " + config.EnvHTTPToken +
			" (a bearer token clients must send), or listen on 127.0.0.1 or [::1]")}
	}
	return httpAccess{addr: addr, token: token}, nil
}

// loopbackHost reports whether host only accepts local connections:
// localhost or a loopback IP (an empty host means every interface).
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guard requires the bearer token on every request when one is set.
func (a httpAccess) guard(next http.Handler) http.Handler {
	if a.token == "" {
		return next
	}
	want := sha256.Sum256([]byte(a.token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(got))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hikoutei"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}
