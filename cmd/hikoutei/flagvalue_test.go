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

// TestAMissingOrExtraArgumentIsNamedAndHelpOnAnUnknownCommandIsAnError:
// a command given too few arguments names the missing ones and its usage
// line, too many says how many it takes (not cobra's "accepts 1 arg(s),
// received 0"); `help` on a command that does not exist is a usage error
// with the commands whose names are close, not the root's help and exit 0.
func TestAMissingOrExtraArgumentIsNamedAndHelpOnAnUnknownCommandIsAnError(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"outbox", "show", "--dir", "D"}, "missing EFFECT_ID: hikoutei outbox show --dir DIR EFFECT_ID"},
		{[]string{"conflicts", "ack", "--dir", "D", "c1"}, "missing CANONICAL_REVISION CANDIDATE_HASH CANDIDATE_EPOCH: "},
		{[]string{"quarantine", "show", "--dir", "D", "a", "b"}, "hikoutei quarantine show takes 1 argument(s) (QUARANTINE_ID), got 2"},
		{[]string{"help", "stauts"}, `unknown command "stauts" for "hikoutei"; did you mean "status"?`},
		{[]string{"help", "outbox", "bogus"}, `unknown command "bogus" for "hikoutei outbox"`},
	} {
		code, out := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(out, c.want) || strings.Contains(out, "arg(s)") {
			t.Errorf("%s: exit %d, want %q:\n%s", strings.Join(c.args, " "), code, c.want, out)
		}
	}
	if code, out := runCLI(t, "help", "status"); code != exitOK || !strings.Contains(out, "status reads a store without changing it") {
		t.Fatalf("help status: exit %d:\n%s", code, out)
	}
}
