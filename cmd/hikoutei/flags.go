package main

import (
	"errors"

	"github.com/spf13/cobra"
)

// requireDir returns the --dir flag, or a usage error (exit 2) when unset.
func requireDir(dir string) error {
	if dir == "" {
		return usageError{errors.New(`required flag "--dir" not set`)}
	}
	return nil
}

func addDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", "", "store directory (required)")
}
