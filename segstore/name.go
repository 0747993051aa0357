package segstore

import (
	"fmt"
	"strings"
)

// ValidName reports whether name can name a segment: not empty, not "."
// or "..", no slash or backslash, no NUL, at most 255 bytes.
func ValidName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 && !strings.ContainsAny(name, "/\\\x00")
}

// checkName is ErrInvalidName for a name ValidName refuses.
func checkName(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}
