package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEveryNumberBooleanAndDurationFlagSaysWhatItTakes: every flag of a
// number, boolean or duration type, of every command, given a value that
// does not parse, is a usage error (exit 2) saying what the flag takes,
// never the Go parser's error (strconv.ParseUint: parsing …).
func TestEveryNumberBooleanAndDurationFlagSaysWhatItTakes(t *testing.T) {
	t.Parallel()
	checked := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			want, ok := flagValueWants[f.Value.Type()]
			if !ok {
				return
			}
			args := append(strings.Fields(c.CommandPath())[1:], "--"+f.Name+"=x!")
			code, out := runCLI(t, args...)
			if code != exitUsage || !strings.Contains(out, "want "+want) || strings.Contains(out, "strconv") || strings.Contains(out, "time:") {
				t.Errorf("%s: exit %d:\n%s", strings.Join(args, " "), code, out)
			}
			checked++
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd())
	if checked < 10 {
		t.Fatalf("only %d flags checked", checked)
	}
	if code, out := runCLI(t, "adopt", "--unit", "99999999999999999999999"); code != exitUsage || !strings.Contains(out, "within range") {
		t.Fatalf("a number out of range: exit %d:\n%s", code, out)
	}
}
