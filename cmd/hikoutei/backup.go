package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/segstore"
)

// backupSource says who wrote a backup.
type backupSource string

const (
	byRunningProcess backupSource = "the running store"
	fromClosedStore  backupSource = "the closed store"
	// byRunningProcessRescue: the running store wrote it while log.db was
	// missing from the directory, and the copy verified.
	byRunningProcessRescue backupSource = "the running store (log.db missing from the directory: the copy of its open log verified)"
)

func newBackupCmd() *cobra.Command {
	var dir, out, segments string
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "backup --dir DIR --out FILE [--force] [--segments URL] [--json]",
		Short: "Write a consistent copy of a store's log.db, running or not",
		Long: `backup writes a consistent copy of DIR/log.db to FILE (mode 0600): the log
as of one commit. While a process holds the store (serve, or a program that
opened it), that process writes the copy through its administrative channel
(DIR/admin.sock) inside one read transaction of the live log, and commits go
on meanwhile; with the store closed, backup copies it itself. It prints the
store id, the log head the copy holds, its size and SHA-256; never a
payload. The sealed segments the copy vouches for are copied, each
checked against its digest, into the folder FILE.segments beside it (read
from the store --segments names when the store is closed; a running store
reads its own).
FILE must not be inside DIR and must not exist unless --force.
'hikoutei restore --from FILE --to NEWDIR' rebuilds a store from it.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			logGone, err := requireStoreOrHolder(dir)
			if err != nil {
				return err
			}
			if out == "" {
				return usageError{errors.New(`required flag "--out" not set`)}
			}
			segs, err := openSegmentsFlag(cmd.Context(), segments, dir)
			if err != nil {
				return err
			}
			defer closeSegments(segs)
			var info hikoutei.BackupInfo
			var src backupSource
			if logGone {
				info, src, err = rescue(cmd.Context(), dir, out, force, segs)
				if errors.Is(err, errDamageFound) {
					fmt.Fprintf(cmd.ErrOrStderr(), "backup: %s\n", escapeControls(err.Error()))
				}
			} else {
				info, src, err = backup(cmd.Context(), dir, out, force, segs)
			}
			if err != nil {
				return err
			}
			printBackupLeftovers(cmd.ErrOrStderr(), info)
			return printBackup(cmd.OutOrStdout(), info, src, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&out, "out", "", "file to write the copy to (outside the store directory; required)")
	cmd.Flags().BoolVar(&force, "force", false, "replace FILE if it exists")
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// backup copies dir's log to out: through the running process's channel,
// or locally when nobody holds the store.
func backup(ctx context.Context, dir, out string, force bool, segs segstore.Store) (hikoutei.BackupInfo, backupSource, error) {
	if err := events.RequireLog(dir); err != nil {
		return hikoutei.BackupInfo{}, "", fmt.Errorf("%w: %w", hikoutei.ErrNotAStore, err)
	}
	abs, err := events.CheckBackupTarget(dir, out, force)
	if err != nil {
		return hikoutei.BackupInfo{}, "", err
	}
	if info, handled, err := backupViaChannel(ctx, dir, abs, force); handled {
		return info, byRunningProcess, err
	}
	info, err := backupLocal(ctx, dir, abs, force, segs)
	if errors.Is(err, events.ErrStoreLocked) {
		if info, handled, cerr := backupViaChannel(ctx, dir, abs, force); handled {
			return info, byRunningProcess, cerr // it was starting
		}
		return info, "", fmt.Errorf("%w: %w; it serves no administrative channel (an older version, opened with NoAdmin, or shutting down): stop it and run backup again",
			admin.ErrHeldWithoutChannel, err)
	}
	return info, fromClosedStore, err
}

// rescue writes the backup of a store whose log.db is missing or empty
// while the process holding it still answers: that process writes a
// full copy of the log it has open through its administrative channel
// (the only copy of the records left), and the copy is verified as a
// restore verifies it (every record's checksum and shape, the sequence
// without a hole, the file's structure) and must hold the head the
// process reported. Errors: the channel's; errDamageFound when the copy
// does not verify.
func rescue(ctx context.Context, dir, out string, force bool, segs segstore.Store) (hikoutei.BackupInfo, backupSource, error) {
	abs, err := events.CheckBackupTarget(dir, out, force)
	if err != nil {
		return hikoutei.BackupInfo{}, "", err
	}
	info, handled, err := backupViaChannel(ctx, dir, abs, force)
	if !handled {
		err = events.RequireLog(dir) // it stopped meanwhile: the log is gone
		if err == nil {
			info, err = backupLocal(ctx, dir, abs, force, segs)
			return info, fromClosedStore, err
		}
		return info, "", err
	}
	if err != nil {
		return info, "", err
	}
	v, err := events.VerifyLogFile(abs)
	switch {
	case err != nil:
		return info, "", fmt.Errorf("verify the rescued copy %s: %w", abs, err)
	case !v.Healthy():
		return info, "", fmt.Errorf("%w: the rescued copy %s does not verify: %w", errDamageFound, abs, v.Err())
	case v.Head != info.Head:
		return info, "", fmt.Errorf("%w: the rescued copy %s holds head %d, the process reported %d", errDamageFound, abs, v.Head, info.Head)
	}
	return info, byRunningProcessRescue, nil
}

// backupViaChannel asks the process holding dir to write the copy to the
// absolute path out; handled is false when nobody serves the channel.
func backupViaChannel(ctx context.Context, dir, out string, force bool) (hikoutei.BackupInfo, bool, error) {
	var resp admin.BackupResponse
	handled, err := viaChannel(ctx, dir, admin.OpStoreBackup, admin.BackupRequest{Out: out, Force: force}, &resp)
	return hikoutei.BackupInfo{Path: out, StoreID: resp.StoreID, Head: resp.Head, ReplicaHead: resp.ReplicaHead, Bytes: resp.Bytes,
		SHA256: resp.SHA256, Segments: resp.Segments}, handled, err
}

// backupLocal copies a closed store's log, holding it read-only, and
// its segments from segs (nil: its folder).
func backupLocal(ctx context.Context, dir, out string, force bool, segs segstore.Store) (hikoutei.BackupInfo, error) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true, Segments: segs})
	if err != nil {
		return hikoutei.BackupInfo{}, events.DescribeLocked(dir, err)
	}
	defer l.Close()
	info, err := l.Backup(ctx, out, force)
	return hikoutei.BackupInfo(info), err
}

// printBackupLeftovers says which temporary files of interrupted backups
// the backup removed (stderr: no part of the result).
func printBackupLeftovers(w io.Writer, info hikoutei.BackupInfo) {
	for _, l := range info.Leftovers {
		fmt.Fprintf(w, "removed %s, left by an interrupted backup (its process no longer runs)\n", shown(l))
	}
}

func printBackup(w io.Writer, info hikoutei.BackupInfo, src backupSource, asJSON bool) error {
	if asJSON {
		return printJSON(w, map[string]any{"file": info.Path, "store_id": info.StoreID, "head": info.Head,
			"replica_head": info.ReplicaHead, "bytes": info.Bytes, "sha256": info.SHA256, "segments": info.Segments, "written_by": string(src)})
	}
	_, err := fmt.Fprintf(w, "backup of store %s at head %d written by %s to %s\n%d bytes sha256 %s\n",
		info.StoreID, info.Head, src, info.Path, info.Bytes, info.SHA256)
	if err == nil && info.Segments > 0 {
		_, err = fmt.Fprintf(w, "%d sealed segments copied to %s\n", info.Segments, events.BackupSegmentsDir(info.Path))
	}
	return err
}
