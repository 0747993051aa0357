// Command hikoutei-lab runs the campaigns that try to break a store: the
// crash campaign (kill -9 at random instants and failpoints), the storage
// fault campaign, the damage campaign (converge), the evolution campaign
// and the operator campaign. `make crash`, `make storage`, `make
// converge`, `make evolve` and `make operator` build and run it
// (docs/testing.md "Make targets"). It is not part of the product: the
// hikoutei binary users install does not link the campaigns. `loggen`
// writes a store with a generated history (docs/operations.md).
//
// Exit codes: 0 nothing found, 1 the campaign failed or found problems,
// 2 usage error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

// errProblemsFound makes a campaign exit 1 after it printed its findings.
var errProblemsFound = errors.New("problems_found")

// usageError marks flag and argument errors (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command with args and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errProblemsFound):
		return exitFailure
	}
	fmt.Fprintln(stderr, "hikoutei-lab: "+err.Error())
	var u usageError
	if errors.As(err, &u) {
		return exitUsage
	}
	return exitFailure
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "hikoutei-lab",
		Short:         "The campaigns that try to break a Hikoutei store (not part of the product)",
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newCrashCmd(), newStorageCampaignCmd(), newStorageRunCmd(), newConvergeCampaignCmd(),
		newEvolveCampaignCmd(), newOperatorCampaignCmd(), newOperatorHoldCmd(), newLoggenCmd())
	return root
}
