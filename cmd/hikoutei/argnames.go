package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// argNames are the names of the arguments a command's Use line gives:
// its upper-case words, but a flag's value (DIR in --dir DIR) and what
// brackets hold.
func argNames(use string) []string {
	var names []string
	words := strings.Fields(use)
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "["):
			for i < len(words) && !strings.HasSuffix(words[i], "]") {
				i++
			}
		case strings.HasPrefix(w, "--"):
			if i+1 < len(words) && isArgName(words[i+1]) {
				i++
			}
		case isArgName(w):
			names = append(names, w)
		}
	}
	return names
}

// isArgName reports whether w is an upper-case placeholder (EFFECT_ID).
func isArgName(w string) bool {
	return w != "" && w[0] >= 'A' && w[0] <= 'Z' && strings.Trim(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") == ""
}

// argCountError says which arguments cmd takes when it got too few or too
// many, instead of cobra's "accepts 1 arg(s), received 0"; nil when its
// Use line names none.
func argCountError(cmd *cobra.Command, got int) error {
	names := argNames(cmd.Use)
	if len(names) == 0 || got == len(names) {
		return nil
	}
	if got < len(names) {
		return fmt.Errorf("missing %s: %s %s", strings.Join(names[got:], " "), cmd.CommandPath(), strings.Join(strings.Fields(cmd.Use)[1:], " "))
	}
	return fmt.Errorf("%s takes %d argument(s) (%s), got %d", cmd.CommandPath(), len(names), strings.Join(names, " "), got)
}
