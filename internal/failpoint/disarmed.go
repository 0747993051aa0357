//go:build !failpoints

package failpoint

import "fmt"

// Compiled reports whether this build has failpoints (the failpoints
// build tag).
const Compiled = false

// Inject does nothing: this build has no failpoints.
func Inject(string) {}

// Err returns nil: this build has no failpoints.
func Err(string) error { return nil }

// Enable accepts only a blank spec: this build has no failpoints.
// Errors: ErrNotCompiled.
func Enable(spec string) error {
	if blank(spec) {
		return nil
	}
	return fmt.Errorf("%w: build with -tags failpoints", ErrNotCompiled)
}

// Disable does nothing: no failpoint is ever enabled in this build.
func Disable() {}

// Hits is always 0 in this build.
func Hits(string) int64 { return 0 }
