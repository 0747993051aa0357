package segstore_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/segstore"
)

// parseErr is Parse's one error text.
const parseErr = "segment_store_unavailable: the segments URL does not parse as scheme://location"

// FuzzRedactNeverShowsCredentials: whatever the URL, Redact shows
// neither its password nor its query, and Parse's error never repeats it.
func FuzzRedactNeverShowsCredentials(f *testing.F) {
	for _, s := range []string{"s3://AKIA:sekrit@bucket/p?token=abc", "gs://b/x?cred=1#frag", "file:///x", "%zz", "mem://", "azblob://c?sas=x%2Fy"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		shown := segstore.Redact(raw)
		if _, err := segstore.Parse(raw); err != nil && err.Error() != parseErr {
			t.Fatalf("Parse's error is not the fixed text (it may repeat the URL): %v", err)
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "" {
			return
		}
		if p, ok := u.User.Password(); ok && len(p) >= 4 && strings.Contains(shown, p) && !strings.Contains(u.Host+u.Path, p) {
			t.Fatalf("Redact(%q) = %q shows the password", raw, shown)
		}
		if q := u.RawQuery; len(q) >= 4 && strings.Contains(shown, q) && !strings.Contains(u.Host+u.EscapedPath(), q) {
			t.Fatalf("Redact(%q) = %q shows the query", raw, shown)
		}
	})
}
