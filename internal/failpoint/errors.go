package failpoint

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors of the failpoint package; match them with errors.Is.
var (
	// ErrSpec: a failpoint spec is malformed (not name=action, an unknown
	// action, a bad N, a name given twice).
	ErrSpec = errors.New("failpoint_spec_invalid")
	// ErrUnknown: a spec names a failpoint this build does not have. See
	// *UnknownError for the known names.
	ErrUnknown = errors.New("failpoint_unknown")
	// ErrNotCompiled: failpoints were asked for (HIKOUTEI_FAILPOINTS, or
	// Enable) in a build without the failpoints build tag.
	ErrNotCompiled = errors.New("failpoints_not_compiled")
)

// UnknownError names a failpoint that does not exist and lists those that
// do. It wraps ErrUnknown.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("%s: %q is not a failpoint (known: %s)", ErrUnknown, e.Name, strings.Join(e.Known, ", "))
}

// Unwrap returns ErrUnknown.
func (e *UnknownError) Unwrap() error { return ErrUnknown }
