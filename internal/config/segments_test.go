package config

import (
	"errors"
	"strings"
	"testing"
)

func TestSegmentsURLIsCheckedStrictlyAndNeverRepeated(t *testing.T) {
	for v, ok := range map[string]bool{
		"":                            true,
		"file:///var/lib/segments":    true,
		"s3://bucket/prefix?region=x": true,
		"mem://":                      true,
		"file:relative":               false,
		"file://host/x":               false,
		"file:///x?token=hunter2":     false,
		"no-scheme/hunter2":           false,
		"%zz":                         false,
	} {
		got, err := LoadSegmentsURL(func(k string) (string, bool) { return v, k == EnvSegmentsURL })
		if ok != (err == nil) || (ok && got != v) {
			t.Errorf("%q: %q, %v", v, got, err)
		}
		if err != nil && (!errors.Is(err, ErrInvalidSegmentsURL) || !strings.Contains(err.Error(), EnvSegmentsURL) || strings.Contains(err.Error(), "hunter2")) {
			t.Errorf("%q: the error %v", v, err)
		}
	}
}
