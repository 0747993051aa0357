package segstore

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
)

// DefaultFolder is the folder of a store directory that holds its sealed
// segments when no URL says otherwise.
const DefaultFolder = "segments"

// Opener opens the Store a URL names. Its errors wrap ErrUnavailable and
// never hold the URL's credentials.
type Opener func(ctx context.Context, u *url.URL) (Store, error)

var (
	openerMu sync.RWMutex
	fallback Opener
)

// RegisterFallback sets the opener of every scheme other than file
// (package blobstore registers gocloud.dev/blob's). The last one wins.
func RegisterFallback(o Opener) {
	openerMu.Lock()
	defer openerMu.Unlock()
	fallback = o
}

// Open is the Store rawURL names for the store directory storeDir: ""
// is storeDir's segments folder (Dir), file:///path the folder path
// (Dir), any other scheme the registered fallback's. Errors:
// ErrUnavailable (a URL that does not parse, a relative file URL, a
// scheme no opener in this program handles, the opener's failure).
func Open(ctx context.Context, rawURL, storeDir string) (Store, error) {
	if rawURL == "" {
		return NewDir(filepath.Join(storeDir, DefaultFolder)), nil
	}
	u, err := Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "file" {
		return openFile(u)
	}
	openerMu.RLock()
	o := fallback
	openerMu.RUnlock()
	if o == nil {
		return nil, fmt.Errorf("%w: this program links no object store driver for %q URLs (a file:/// folder needs none)", ErrUnavailable, u.Scheme)
	}
	return o(ctx, u)
}

// Parse parses rawURL; its error never repeats the URL (it may hold
// credentials). Errors: ErrUnavailable.
func Parse(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme == "" {
		return nil, fmt.Errorf("%w: the segments URL does not parse as scheme://location", ErrUnavailable)
	}
	return u, nil
}

// openFile is the Dir of a file:///path URL.
func openFile(u *url.URL) (Store, error) {
	if (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) || u.RawQuery != "" {
		return nil, fmt.Errorf("%w: a file segments URL is file:///absolute/folder, with no host nor query", ErrUnavailable)
	}
	return NewDir(filepath.Clean(u.Path)), nil
}

// Redact is rawURL safe to show: its scheme, host and path, without user
// information, query or fragment ("" stays ""; a URL that does not parse
// shows as "(unparsable URL)").
func Redact(rawURL string) string {
	if rawURL == "" {
		return ""
	}
	u, err := Parse(rawURL)
	if err != nil {
		return "(unparsable URL)"
	}
	return RedactedLocation(u).String()
}

// RedactedLocation is u's scheme and host and path, nothing else.
func RedactedLocation(u *url.URL) Location {
	if u.Scheme == "file" {
		return Location{Scheme: SchemeDir, Where: filepath.Clean(u.Path)}
	}
	return Location{Scheme: u.Scheme, Where: u.Host + u.EscapedPath()}
}
