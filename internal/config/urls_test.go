package config

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

var badNATSURLs = []string{
	"garbage", "nats://", "nats:host", "host:4222", "//host:4222", "http://host:4222", "https://host", "NATS",
	"nats://host:0", "nats://host:65536", "nats://host:042", "nats://host:", "nats://host:42a", "nats://:4222",
	"nats://host:4222/path", "tls://host/x", "nats://host?x=1", "nats://host#f", "nats://host?",
	"nats://a b:4222", " nats://host", "nats://host ", "nats://host\n", "nats://host\t", "nats://h\x00",
	"nats://host,", ",nats://host", "nats://a:1,,nats://b:2", "nats://a:1, nats://b:2", "nats://[::1",
}

var goodNATSURLs = []string{
	"nats://127.0.0.1:4222", "nats://localhost", "tls://user:s3cret@nats.example.com:4443", "ws://h:8080/ws", "wss://h",
	"nats://[::1]:4222", "nats://a:4222,nats://b:4222,tls://c:4443", "nats://token@h:1", "NATS://H:65535",
}

func TestRepro12_NATSURLIsParsedStrictly(t *testing.T) {
	for _, v := range badNATSURLs {
		_, err := LoadNATSURL(envOf(map[string]string{EnvNATSURL: v}))
		var ee *EnvError
		if !errors.Is(err, ErrInvalidNATSURL) || !errors.As(err, &ee) || ee.Var != EnvNATSURL ||
			!strings.HasPrefix(err.Error(), EnvNATSURL+": invalid_nats_url: ") {
			t.Errorf("%q: %v, want %s: invalid_nats_url", v, err, EnvNATSURL)
		}
	}
	for _, v := range goodNATSURLs {
		if got, err := LoadNATSURL(envOf(map[string]string{EnvNATSURL: v})); err != nil || got != v {
			t.Errorf("%q: %q, %v", v, got, err)
		}
	}
	if got, err := LoadNATSURL(envOf(nil)); got != "" || err != nil {
		t.Fatalf("unset: %q %v", got, err)
	}
}

// An error names the variable and the server, never the value: a URL may
// carry a password.
func TestRepro12_URLErrorsNeverRepeatTheValue(t *testing.T) {
	for _, c := range []struct{ env, v string }{
		{EnvNATSURL, "nats://u:hunter2@h:1,http://u:hunter2@h:1"},
		{EnvNATSURL, "hunter2"},
		{EnvSheetsEndpoint, "http://u:hunter2@h:1/"},
		{EnvSheetsEndpoint, "http://h:1/?key=hunter2"},
	} {
		err := Check(envOf(map[string]string{c.env: c.v}))
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), c.env) {
			t.Errorf("%s=%q: %v", c.env, c.v, err)
		}
	}
	err := ParseNATSURL("nats://a:1,http://b:2")
	if err == nil || !strings.Contains(err.Error(), "server 2 of 2: scheme must be nats, tls, ws, wss") {
		t.Fatalf("%v", err)
	}
}

// Check reports every malformed product variable at once.
func TestRepro12_CheckReportsEveryMalformedVariable(t *testing.T) {
	err := Check(envOf(map[string]string{EnvNATSURL: "garbage", EnvSheetsEndpoint: "http://a b/", EnvPollingInterval: "1e3"}))
	for _, want := range []error{ErrInvalidNATSURL, ErrInvalidEndpoint} {
		if !errors.Is(err, want) {
			t.Errorf("Check: %v, want %v among the errors", err, want)
		}
	}
	if err := Check(envOf(map[string]string{EnvNATSURL: "nats://127.0.0.1:4222", EnvSheetsEndpoint: "http://127.0.0.1:8787/"})); err != nil {
		t.Fatalf("good values: %v", err)
	}
	if err := Check(envOf(map[string]string{EnvPollingInterval: "1e3"})); !errors.Is(err, ErrInvalidInterval) {
		t.Fatalf("interval: %v", err)
	}
}

func TestSheetsEndpointIsParsedStrictly(t *testing.T) {
	for _, v := range []string{"http://a b/", "localhost:8787", "ftp://h", "http://", "http://h:0/", "http://h:99999", "http://u:p@h/",
		"http://h/?q", "http://h/#f", "http://h/\n", "http:///path"} {
		if _, err := LoadSync(envOf(map[string]string{EnvSheetsEndpoint: v})); !errors.Is(err, ErrInvalidEndpoint) {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, v := range []string{"http://127.0.0.1:8787/", "https://sheets.googleapis.com/", "http://[::1]:1/base/"} {
		if s, err := LoadSync(envOf(map[string]string{EnvSheetsEndpoint: v})); err != nil || s.Endpoint != v {
			t.Errorf("%q: %v", v, err)
		}
	}
}

// FuzzParseNATSURL: arbitrary text never panics; whatever is accepted is
// a list of absolute URLs with an allowed scheme and a host.
func FuzzParseNATSURL(f *testing.F) {
	for _, s := range append(append([]string{}, badNATSURLs...), goodNATSURLs...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if ParseNATSURL(v) != nil {
			return
		}
		for _, s := range strings.Split(v, ",") {
			u, err := url.Parse(s)
			if err != nil || u.Hostname() == "" || strings.ContainsAny(s, " \t\r\n") {
				t.Fatalf("accepted %q (server %q: %v)", v, s, err)
			}
			switch u.Scheme {
			case "nats", "tls", "ws", "wss":
			default:
				t.Fatalf("accepted %q with scheme %q", v, u.Scheme)
			}
		}
	})
}
