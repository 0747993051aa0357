package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
)

// argsUsage wraps a cobra positional-args validator so its errors exit 2.
func argsUsage(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := v(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// userTempDir is where a campaign makes its working directories.
func userTempDir() string { return os.TempDir() }

// procSelfExe names, on Linux, the image the calling process runs, even
// once its file was replaced or removed.
const procSelfExe = "/proc/self/exe"

// selfExe is the program a campaign re-executes as its children: this
// process's own image (procSelfExe), not the file at its path, which
// another build may have replaced meanwhile (make builds every lab
// target into one shared LAB_DIR): a child of another build would not
// run the supervisor's workload (one that ignores --segments bucket seals
// into the store's folder, and the check reports segment_missing). Where
// there is no procSelfExe, the file at the path (os.Executable).
func selfExe() (string, error) {
	if _, err := os.Stat(procSelfExe); err == nil {
		return procSelfExe, nil
	}
	return os.Executable()
}

// interruptible is ctx cancelled by SIGINT/SIGTERM: a campaign stops
// cleanly and still reports.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// productBinary is the hikoutei binary the operator campaign's acts run:
// named, else the one beside this binary (the make targets build both
// there).
func productBinary(named, self string) (string, error) {
	if named == "" {
		named = filepath.Join(filepath.Dir(self), "hikoutei")
	}
	if fi, err := os.Stat(named); err != nil || fi.IsDir() {
		return "", usageError{fmt.Errorf("no hikoutei binary at %s: build it there (go build -o %s ./cmd/hikoutei) or pass --hikoutei",
			named, named)}
	}
	return named, nil
}
