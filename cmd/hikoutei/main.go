// Command hikoutei is the operator's CLI for a Hikoutei store.
//
// Exit codes: 0 success (doctor: healthy), 1 the command ran and failed or
// found problems, 2 usage error (unknown command or flag, missing argument,
// a malformed environment variable), 3 damage found (doctor: the log is
// corrupt; salvage: sequences were lost; restore: the backup is damaged), 4 fenced (serve in replicated
// mode: another primary took the store over), 5 doctor: the log has holes
// (sequences lost to a salvage or an accepted log gap; the store works,
// but it is not healthy).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
)

// Exit codes (documented in docs/cli.md).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitDamage  = 3
	exitFenced  = 4
	// exitBrokenPipe: stdout's reader went away (`hikoutei audit | head`):
	// nothing is printed about it, and main ends the process by SIGPIPE
	// once its scratch copies are removed (a shell sees 128+13).
	exitBrokenPipe = 128 + 13
	exitHoles      = 5
	// exitLogReplaced: serve stopped while its log.db was replaced or
	// removed under it (log_file_replaced).
	exitLogReplaced = 6
)

// errProblemsFound makes a command exit 1 after it printed its findings.
var errProblemsFound = errors.New("problems_found")

// errDamageFound makes a command exit 3 after it printed its findings:
// stored data is damaged (doctor) or was lost (salvage).
var errDamageFound = errors.New("damage_found")

// errHolesFound makes doctor exit 5 after it printed its findings: the
// log has holes (chain_restarted) and nothing else failed.
var errHolesFound = errors.New("holes_found")

// errSetAsideNotDeleted: `setaside --delete` could not delete some of
// the files it selected (each is named with why); the others are deleted.
var errSetAsideNotDeleted = errors.New("set_aside_not_deleted")

// usageError marks flag and argument errors (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	p := setupProcess()
	p.finish(runContext(p.ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the CLI with args and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is run with ctx as the commands' context (main's is
// cancelled by SIGINT, SIGTERM and SIGHUP).
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if cmd, err := unknownCommand(root, args); err != nil {
		return exitCode(cmd, err, stderr)
	}
	if len(args) > 1 && args[0] == "help" { // help on a command that does not exist is one too
		if cmd, err := unknownCommand(root, args[1:]); err != nil {
			return exitCode(cmd, err, stderr)
		}
	}
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(cmd, err, stderr)
}

// unknownCommand finds the command args name before cobra parses a flag:
// a mistyped command followed by flags (`hikoutei stauts --dir D`) is the
// unknown command, with the commands whose names are close, not the first
// flag the root does not know. It returns the deepest command reached and
// a usage error when a word names no subcommand of a command that has
// some; nil when args reach a command (or a flag it does not know: cobra
// reports that).
func unknownCommand(root *cobra.Command, args []string) (*cobra.Command, error) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmd := root
	for i := 0; i < len(args) && cmd.HasAvailableSubCommands(); i++ {
		a := args[i]
		if a == "--" {
			return cmd, nil
		}
		if strings.HasPrefix(a, "-") {
			known, takesValue := lookupFlag(cmd, a)
			if !known {
				return cmd, nil // cobra says which flag it does not know
			}
			if takesValue && !strings.Contains(a, "=") {
				i++ // the flag's value
			}
			continue
		}
		if strings.HasPrefix(a, "__complete") {
			return cmd, nil // shell completion
		}
		next := childNamed(cmd, a)
		if next == nil {
			msg := fmt.Sprintf("unknown command %q for %q", a, cmd.CommandPath())
			cmd.SuggestionsMinimumDistance = max(cmd.SuggestionsMinimumDistance, 2)
			if s := cmd.SuggestionsFor(a); len(s) > 0 {
				msg += fmt.Sprintf("; did you mean %q?", s[0])
				for _, more := range s[1:] {
					msg = strings.TrimSuffix(msg, "?") + fmt.Sprintf(" or %q?", more)
				}
			}
			return cmd, usageError{errors.New(msg)}
		}
		cmd = next
	}
	return cmd, nil
}

// childNamed is cmd's subcommand named (or aliased) name, nil when none.
func childNamed(cmd *cobra.Command, name string) *cobra.Command {
	for _, c := range cmd.Commands() {
		if c.Name() == name || c.HasAlias(name) {
			return c
		}
	}
	return nil
}

// lookupFlag says whether arg (--name, --name=v, -x) is a flag of cmd,
// and whether that flag takes a value.
func lookupFlag(cmd *cobra.Command, arg string) (known, takesValue bool) {
	cmd.InitDefaultHelpFlag()
	cmd.InitDefaultVersionFlag()
	flags := cmd.Flags()
	name, long := strings.CutPrefix(arg, "--")
	name, _, _ = strings.Cut(name, "=")
	f := flags.Lookup(name)
	if !long {
		f = nil
		if short := strings.TrimPrefix(arg, "-"); short != "" {
			f = flags.ShorthandLookup(short[:1])
		}
	}
	if f == nil {
		return false, false
	}
	return true, f.NoOptDefVal == ""
}

// exitCode maps err to the exit code and says what failed on stderr; a
// usage error adds one line naming the help of the command that failed
// (not its whole usage).
func exitCode(cmd *cobra.Command, err error, stderr io.Writer) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, syscall.EPIPE):
		return exitBrokenPipe // the reader of stdout went away: nobody to tell
	case errors.Is(err, errProblemsFound):
		return exitFailure
	case errors.Is(err, errDamageFound):
		return exitDamage
	case errors.Is(err, errHolesFound):
		return exitHoles
	case errors.Is(err, errServeLogReplaced):
		fmt.Fprintf(stderr, "hikoutei: %s\n", escapeControls(err.Error()))
		return exitLogReplaced
	case errors.Is(err, hikoutei.ErrReplicationFenced):
		fmt.Fprintf(stderr, "hikoutei: %v\n", err)
		return exitFenced
	case errors.As(err, new(usageError)):
		fmt.Fprintf(stderr, "hikoutei: %s\nRun '%s --help' for usage.\n", escapeControls(err.Error()), cmd.CommandPath())
		return exitUsage
	}
	fmt.Fprintf(stderr, "hikoutei: %s\n", escapeControls(err.Error()))
	return exitFailure
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "hikoutei",
		Short:         "Operate a Hikoutei store: an event-sourced log projected to SQLite and Google Sheets",
		Version:       buildVersion().Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          argsUsage(cobra.NoArgs),
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		// Every command parses the environment before it does anything.
		PersistentPreRunE: func(*cobra.Command, []string) error { return checkEnv() },
	}
	root.SetVersionTemplate("hikoutei {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newVersionCmd(), newDoctorCmd(), newFakeSheetsCmd(), newStatusCmd(), newReplayCmd(), newAuditCmd(), newPollCmd(), newDemoCmd(), newServeCmd(), newConflictsCmd(), newSalvageCmd(),
		newOutboxCmd(), newQuarantineCmd(), newPingCmd(), newBackupCmd(), newRestoreCmd(), newSubscriptionsCmd(), newSchemaCmd(), newMigrateCmd(), newAdoptCmd(), newSealCmd(), newEraseCmd(), newCompactCmd(), newSetAsideCmd())
	addExamples(root)
	return root
}

// checkEnv parses every variable Hikoutei reads, strictly: a malformed
// URL or interval, or HIKOUTEI_FAILPOINTS in a build without failpoints
// (or naming an unknown one), stops the command before it touches a store
// (exit 2), instead of being ignored.
func checkEnv() error {
	if err := errors.Join(config.Check(nil), failpoint.CheckEnv(nil)); err != nil {
		return usageError{fmt.Errorf("environment: %w", err)}
	}
	return nil
}

// argsUsage wraps a cobra positional-args validator so its errors exit 2.
// A store's path given as an argument to a command that takes it as
// --dir (`hikoutei status ./mystore`) is told so.
func argsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		err := v(cmd, args)
		if err == nil {
			return nil
		}
		if f := cmd.Flags().Lookup("dir"); f != nil && !f.Changed && len(args) == 1 {
			if fi, serr := os.Stat(args[0]); serr == nil && fi.IsDir() {
				return usageError{fmt.Errorf("%s takes no argument; to name the store, give --dir: %s --dir %s", cmd.CommandPath(),
					cmd.CommandPath(), args[0])}
			}
		}
		if plain := argCountError(cmd, len(args)); plain != nil && strings.Contains(err.Error(), "arg(s), received") {
			err = plain
		}
		return usageError{err}
	}
}

// flagError is a usage error for a flag cobra refused; an unknown flag
// gets the closest flags of cmd (`--dri`: did you mean --dir?).
func flagError(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return usageError{plainFlagValueError(err)}
	}
	var close []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && editDistance(name, f.Name) <= 2 {
			close = append(close, "--"+f.Name)
		}
	})
	if len(close) > 0 {
		err = fmt.Errorf("%w; did you mean %s?", err, strings.Join(close, " or "))
	}
	return usageError{err}
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
