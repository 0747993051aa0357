package config

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
)

// ParseNATSURL checks a NATS server list as HIKOUTEI_NATS_URL carries it:
// one or more URLs separated by commas, each with a scheme of nats, tls,
// ws or wss, a host, an optional port in 1–65535, no query or fragment,
// and (ws and wss aside) no path. A user and password are allowed. Space
// and control characters are refused anywhere. Errors wrap
// ErrInvalidNATSURL and name the offending server by position, never by
// its text.
func ParseNATSURL(v string) error {
	servers := strings.Split(v, ",")
	for i, s := range servers {
		if problem := natsServerProblem(s); problem != "" {
			if len(servers) > 1 {
				problem = fmt.Sprintf("server %d of %d: %s", i+1, len(servers), problem)
			}
			return fmt.Errorf("%w: %s", ErrInvalidNATSURL, problem)
		}
	}
	return nil
}

func natsServerProblem(s string) string {
	if s == "" {
		return "empty server URL"
	}
	u, problem := parseURL(s, "nats", "tls", "ws", "wss")
	switch {
	case problem != "":
		return problem
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?"):
		return "must not have a query or fragment"
	case u.Path != "" && u.Path != "/" && u.Scheme != "ws" && u.Scheme != "wss":
		return "must not have a path (only ws and wss URLs may)"
	}
	return ""
}

// parseURL parses an absolute URL whose scheme is one of schemes, with a
// host and a valid port if any, and no space or control character. It
// returns the problem in words ("" when none); the words never quote s.
func parseURL(s string, schemes ...string) (*url.URL, string) {
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return nil, "contains a space or control character"
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, "not a URL"
	}
	ok := false
	for _, sc := range schemes {
		ok = ok || u.Scheme == sc
	}
	switch {
	case !ok:
		return nil, "scheme must be " + strings.Join(schemes, ", ") + " (written scheme://host)"
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, "has no host (written scheme://host[:port])"
	case !validPort(u.Port(), strings.HasSuffix(u.Host, ":")):
		return nil, "port must be a number in 1–65535"
	}
	return u, ""
}

func validPort(p string, colon bool) bool {
	if p == "" {
		return !colon
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535 && p[0] != '0'
}
