package emulator

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The emulator has no authentication, so a web page in the browser of the
// person running it must not be able to use it. Every request, the API and
// the HTML view alike, passes three checks before anything else (refused
// requests are not counted and change nothing):
//
//   - Host (DNS rebinding): the Host header must name the emulator itself:
//     "localhost" or a name under ".localhost", a loopback IP, the local
//     IP the connection arrived on, or a name in Options.AllowedHosts.
//     Anything else answers 403 PERMISSION_DENIED (ErrForeignHost).
//   - Origin (cross-site requests): absent, or the same origin as the Host
//     header (scheme http or https, same host and port). A foreign origin
//     or "null" answers 403 PERMISSION_DENIED (ErrForeignOrigin).
//   - Content-Type (CORS-free "simple" requests): a POST, PUT, PATCH or
//     DELETE must say application/json (a charset parameter, if any, must
//     be UTF-8), as the sheets/v4 client does for every call with a body.
//     Anything else answers 415 (ErrUnsupportedMediaType).
//
// No CORS headers are ever sent, so a browser never lets a foreign page
// read an answer either.

// guard returns the failure for a request the checks refuse, or nil.
func (e *Emulator) guard(r *http.Request) *apiFailure {
	if !e.hostAllowed(r) {
		return &apiFailure{err: errorf(ErrForeignHost,
			"The Host header does not name this emulator (a loopback address, localhost, or a host allowed at start).")}
	}
	if !sameOrigin(r.Header.Get("Origin"), r.Host) {
		return &apiFailure{err: errorf(ErrForeignOrigin, "Cross-origin requests are refused: the Origin header is not this emulator's.")}
	}
	if writesBody(r.Method) && !isJSON(r.Header.Get("Content-Type")) {
		return &apiFailure{err: errorf(ErrUnsupportedMediaType, "Content-Type must be application/json.")}
	}
	return nil
}

// hostAllowed applies the Host rule. A request served without a network
// connection (a handler called directly) has no local address: only the
// loopback names and AllowedHosts then pass.
func (e *Emulator) hostAllowed(r *http.Request) bool {
	name := hostName(r.Host)
	if name == "" {
		return false
	}
	if strings.EqualFold(name, "localhost") || strings.HasSuffix(strings.ToLower(name), ".localhost") {
		return true
	}
	if ip := net.ParseIP(name); ip != nil {
		return ip.IsLoopback() || ip.Equal(localIP(r))
	}
	for _, h := range e.opts.AllowedHosts {
		if strings.EqualFold(strings.TrimSuffix(name, "."), strings.TrimSuffix(h, ".")) {
			return true
		}
	}
	return false
}

// hostName is the host of a Host header without its port or IPv6 brackets.
func hostName(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

// localIP is the IP the request's connection arrived on (nil if none).
func localIP(r *http.Request) net.IP {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		return a.IP
	}
	return nil
}

// sameOrigin reports whether an Origin header is absent or names the same
// origin as the (already checked) Host header.
func sameOrigin(origin, host string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return false
	}
	return strings.EqualFold(u.Hostname(), hostName(host)) && portOr(u.Port(), u.Scheme) == portOr(hostPort(host), u.Scheme)
}

func hostPort(hostport string) string {
	if _, p, err := net.SplitHostPort(hostport); err == nil {
		return p
	}
	return ""
}

// portOr is port, or the scheme's default port when port is empty.
func portOr(port, scheme string) string {
	switch {
	case port != "":
		return port
	case scheme == "https":
		return "443"
	}
	return "80"
}

// writesBody reports the methods whose body the API reads.
func writesBody(method string) bool {
	switch method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

// isJSON accepts "application/json" with an optional UTF-8 charset (any
// case), and other parameters.
func isJSON(contentType string) bool {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}
