package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// requireDir returns the --dir flag, or a usage error (exit 2) when unset.
func requireDir(dir string) error {
	if dir == "" {
		return usageError{errors.New(`required flag "--dir" not set`)}
	}
	return nil
}

// requireStore checks that --dir was given (else exit 2) and names a
// store: a directory that is missing, is not a directory or holds no log
// is not_a_store, the same code for every command.
func requireStore(dir string) error {
	if err := requireStoreDir(dir); err != nil {
		return err
	}
	return engine.IsStore(dir)
}

// requireStoreDir is requireStore for doctor, which reports a directory
// whose log is missing or damaged itself: --dir must be a directory.
func requireStoreDir(dir string) error {
	if err := requireDir(dir); err != nil {
		return err
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: %s is not a directory", engine.ErrNotAStore, dir)
	}
	return nil
}

func addDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", "", "store directory (required)")
}
