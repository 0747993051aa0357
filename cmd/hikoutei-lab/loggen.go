package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/loggen"
)

// newLoggenCmd writes a store whose log holds a generated history
// (internal/loggen: updates of 5,000 Items in units of 100, spread over
// the year before now), for `audit verify` and Open over a long log.
func newLoggenCmd() *cobra.Command {
	var dir string
	var events uint64
	cmd := &cobra.Command{
		Use:   "loggen --events N --dir DIR",
		Short: "Writes a new store in DIR whose log holds N generated updates (a year of simulated history)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" || events == 0 {
				return usageError{errors.New("loggen needs --dir and --events above 0")}
			}
			if _, err := os.Stat(filepath.Join(dir, "log.db")); err == nil {
				return usageError{fmt.Errorf("%s already holds a store: name a new directory", dir)}
			}
			start := time.Now()
			head, err := loggen.Generate(dir, events, loggen.Options{})
			if err != nil {
				return fmt.Errorf("loggen: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "generated %d events in %s (head %d)\n", events, dir, head)
			fmt.Fprintf(cmd.OutOrStdout(), "took %s\n", time.Since(start).Round(time.Second))
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "store directory to create (must not hold a store)")
	cmd.Flags().Uint64Var(&events, "events", 0, "generated updates (10000000 = a year of history at the issue's scale)")
	return cmd
}
