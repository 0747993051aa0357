package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagValueWants is what a flag of each value type takes, said instead
// of the Go parser's error (strconv.ParseUint: parsing "-1": invalid
// syntax) when a value does not parse.
var flagValueWants = map[string]string{
	"uint": "a whole number, 0 or more", "uint8": "a whole number, 0 or more", "uint16": "a whole number, 0 or more",
	"uint32": "a whole number, 0 or more", "uint64": "a whole number, 0 or more",
	"int": "a whole number", "int8": "a whole number", "int16": "a whole number", "int32": "a whole number", "int64": "a whole number",
	"float32": "a number", "float64": "a number",
	"bool": "true or false",
	"duration": "a duration such as 500ms, 30s, 5m or 1h30m",
}

// plainFlagValueError rewrites pflag's error for a value of a number,
// boolean or duration flag that does not parse into what the flag takes
// (out of range for a number too large); any other error is returned as
// it is.
func plainFlagValueError(err error) error {
	var iv *pflag.InvalidValueError
	if !errors.As(err, &iv) || iv.GetFlag() == nil {
		return err
	}
	want, ok := flagValueWants[iv.GetFlag().Value.Type()]
	if !ok {
		return err // the flag's own Set said what it takes
	}
	var num *strconv.NumError
	if errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange) {
		want += ", within range"
	}
	return fmt.Errorf("invalid argument %q for \"--%s\" flag: want %s", iv.GetValue(), iv.GetFlag().Name, want)
}

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
