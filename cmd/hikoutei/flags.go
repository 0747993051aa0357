package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
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
	err := engine.IsStore(dir)
	heldWithoutLog(dir, err)
	return err
}

// requireStoreOrHolder is requireStore for the commands the process
// holding the store answers over its administrative channel (ping,
// status, backup): when dir's log.db is missing or empty but that
// process still answers — it holds the removed or replaced log open,
// the only copy of the records — it reports logGone and no error, and
// the command goes through the channel.
func requireStoreOrHolder(dir string) (logGone bool, err error) {
	if err := requireStore(dir); err != nil {
		var missing *events.StoreLogMissingError
		if errors.As(err, &missing) && missing.Held {
			return true, nil
		}
		return false, err
	}
	return false, nil
}

// heldWithoutLog marks err, when it is a *events.StoreLogMissingError,
// as held when a process still answers on dir's administrative channel:
// its message then says to back the open log up before stopping it.
func heldWithoutLog(dir string, err error) {
	var missing *events.StoreLogMissingError
	if !errors.As(err, &missing) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var st admin.StatusResponse
	missing.Held = admin.Call(ctx, dir, admin.OpStatus, nil, &st) == nil
}

// requireStoreDir is requireStore for doctor, which reports a directory
// whose log is missing or damaged itself: --dir must be a directory.
func requireStoreDir(dir string) error {
	if err := requireDir(dir); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist: give the directory of a store (the one your program opened)", engine.ErrNotAStore, dir)
	case err != nil || !fi.IsDir():
		return engine.NotADirectory(dir)
	}
	return nil
}

func addDirFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "dir", "", "store directory (required)")
}
