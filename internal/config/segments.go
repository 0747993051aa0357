package config

import (
	"fmt"
	"net/url"
	"path/filepath"
)

// LoadSegmentsURL reads HIKOUTEI_SEGMENTS_URL ("" = unset: the store's
// segments folder). Errors: *EnvError wrapping ErrInvalidSegmentsURL
// (see ParseSegmentsURL).
func LoadSegmentsURL(lookup Lookup) (string, error) {
	if lookup == nil {
		lookup = OS
	}
	v := get(lookup, EnvSegmentsURL)
	if v == "" {
		return "", nil
	}
	if err := ParseSegmentsURL(v); err != nil {
		return "", &EnvError{Var: EnvSegmentsURL, Err: err}
	}
	return v, nil
}

// ParseSegmentsURL checks where sealed segments live as a URL: a scheme
// and, for file, an absolute path with no host, query or fragment. It
// does not say whether the program links a driver for the scheme (Open
// does). Errors wrap ErrInvalidSegmentsURL and never repeat the value,
// which may carry credentials.
func ParseSegmentsURL(v string) error {
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Scheme == "":
		return fmt.Errorf("%w: not a URL with a scheme (file:///folder, s3://bucket/prefix …)", ErrInvalidSegmentsURL)
	case u.Scheme != "file":
		return nil
	case (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" || !filepath.IsAbs(u.Path):
		return fmt.Errorf("%w: a file URL is file:///absolute/folder, with no host nor query", ErrInvalidSegmentsURL)
	}
	return nil
}
