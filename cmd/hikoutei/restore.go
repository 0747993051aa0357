package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	procs "github.com/hikoutei/hikoutei-go/internal/process"
	"github.com/hikoutei/hikoutei-go/segstore"
)

func newRestoreCmd() *cobra.Command {
	var from, to, segments string
	var src replicatedSource
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "restore (--from FILE | --nats URL --store NAME [--nats-nkey FILE]) --to NEWDIR [--segments URL] [--json]",
		Short: "Build a new store directory from a backup or from the replicated stream, verifying every record",
		Long: `restore builds a new store directory NEWDIR (missing or empty) from a backup
written by 'hikoutei backup' (--from FILE), or from a store's replicated log
stream in replicated mode (--store NAME on the cluster --nats URL, default
HIKOUTEI_NATS_URL; --nats-nkey authenticates). The log is copied beside its
final name, verified in full (every record's checksum and shape, the
sequence from 1 to the head without a hole, the file's structure), the
sealed segments it vouches for are copied from FILE.segments into
NEWDIR/segments (or into the store --segments names: one it already holds
with the vouched digest is kept) and the chain walked through them, and only then is it
named NEWDIR/log.db; a backup lacking a segment or holding a damaged one
is refused naming it; then the read model is rebuilt from it, as replay
does. A damaged backup is refused naming the first bad sequence (exit 3),
and nothing is left in NEWDIR. A store restored from the stream has the
store id every host of that store has (the one the stream was claimed for
by its first primary), so its hash chain verifies and a standby accepts
it; its records are the stream's (fencing tokens never leave a store). Opening a restored store takes the writer lease over from the
holder the copy names once the takeover rule allows it (at most 15 s after
that holder's last heartbeat).`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if to == "" {
				return usageError{errors.New(`required flag "--to" not set`)}
			}
			if (from == "") == (src.store == "") {
				return usageError{errors.New("give --from FILE, or --store NAME (with --nats URL)")}
			}
			if src.store != "" {
				if err := src.resolve(); err != nil {
					return err
				}
			}
			segs, err := openSegmentsFlag(cmd.Context(), segments, to)
			if err != nil {
				return err
			}
			defer closeSegments(segs)
			return runRestore(cmd, from, src, to, segs, asJSON)
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "backup file written by 'hikoutei backup'")
	cmd.Flags().StringVar(&to, "to", "", "new store directory (missing or empty; required)")
	cmd.Flags().StringVar(&src.url, "nats", "", "NATS URL(s) of the replication cluster (default HIKOUTEI_NATS_URL)")
	cmd.Flags().StringVar(&src.store, "store", "", "replicated store name whose stream to restore from")
	cmd.Flags().StringVar(&src.nkey, "nats-nkey", "", "nkey user seed file to authenticate with")
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

func runRestore(cmd *cobra.Command, from string, src replicatedSource, to string, segs segstore.Store, asJSON bool) error {
	var info hikoutei.BackupInfo
	var err error
	if from != "" {
		info, err = restoreFromFile(from, to, segs)
	} else {
		info, err = restoreFromStream(cmd.Context(), src, to)
	}
	if errors.Is(err, events.ErrBackupCorrupt) {
		fmt.Fprintf(cmd.ErrOrStderr(), "restore: %v\nnothing was restored into %s\n", err, to)
		return errDamageFound
	}
	if err != nil {
		return err
	}
	rep, err := rebuildRestored(cmd.Context(), info, to, segs)
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(cmd.OutOrStdout(), rep)
	}
	return rep.print(cmd.OutOrStdout())
}

// restoreJSON is what restore reports (`restore --json` prints it).
type restoreJSON struct {
	Dir     string `json:"dir"`
	StoreID string `json:"store_id"`
	Head    uint64 `json:"head"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	// Segments counts the sealed segments restored (and verified).
	Segments int `json:"segments,omitempty"`
	// ReadModel is false when the log declares no entity yet: the read
	// model is built when the store is first opened.
	ReadModel  bool   `json:"read_model_built"`
	Checkpoint uint64 `json:"checkpoint"`
}

func (r restoreJSON) print(w io.Writer) error {
	var err error
	if r.Segments > 0 {
		if _, err = fmt.Fprintf(w, "%d sealed segments restored and verified\n", r.Segments); err != nil {
			return err
		}
	}
	if !r.ReadModel {
		_, err = fmt.Fprintf(w, "restored store %s at head %d into %s (log %d bytes sha256 %s); the log declares no entities: the read model is built when the store is first opened\n",
			r.StoreID, r.Head, r.Dir, r.Bytes, r.SHA256)
		return err
	}
	_, err = fmt.Fprintf(w, "restored store %s at head %d into %s (log %d bytes sha256 %s); read model at checkpoint %d\n",
		r.StoreID, r.Head, r.Dir, r.Bytes, r.SHA256, r.Checkpoint)
	return err
}

// restoreFromStream catches the stream up into a scratch log beside to,
// then restores that log (verified) into to.
func restoreFromStream(ctx context.Context, src replicatedSource, to string) (hikoutei.BackupInfo, error) {
	if _, err := events.CheckOutside(to); err != nil {
		return hikoutei.BackupInfo{}, err // target_inside_store, naming to and the store
	}
	if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 {
		return hikoutei.BackupInfo{}, events.RefuseRestoreTarget(to, len(entries))
	}
	sweepRestoreScratch(to)
	scratch, err := scratchDir(to, restoreScratchPrefix+strconv.Itoa(os.Getpid())+"-*")
	if err != nil {
		return hikoutei.BackupInfo{}, err
	}
	defer os.RemoveAll(scratch)
	path := filepath.Join(scratch, events.LogFileName)
	if _, err := src.catchUpInto(ctx, path); err != nil {
		return hikoutei.BackupInfo{}, fmt.Errorf("read the stream of store %q: %w", src.store, err)
	}
	return restoreFromFile(path, to, nil)
}

// restoreFromFile restores the log file at path into the store directory
// to, its segments into segs (nil: to's folder).
func restoreFromFile(path, to string, segs segstore.Store) (hikoutei.BackupInfo, error) {
	info, err := events.RestoreLogTo(path, to, segs)
	return hikoutei.BackupInfo(info), err
}

// rebuildRestored builds the restored store's read model and reports. A
// log that declares no entity yet (a store never opened with entities)
// gets its read model when the store is first opened.
func rebuildRestored(ctx context.Context, info hikoutei.BackupInfo, dir string, segs segstore.Store) (restoreJSON, error) {
	rep := restoreJSON{Dir: dir, StoreID: info.StoreID, Head: info.Head, Bytes: info.Bytes, SHA256: info.SHA256, Segments: info.Segments}
	declared, err := declaresEntities(dir)
	if err != nil || !declared {
		return rep, err
	}
	cp, _, err := hikoutei.RebuildReadModel(ctx, dir, hikoutei.ReplayOptions{Segments: segs})
	if err != nil {
		return rep, fmt.Errorf("the log was restored into %s but its read model was not built (run 'hikoutei replay --dir %s'): %w", dir, dir, err)
	}
	rep.ReadModel, rep.Checkpoint = true, cp
	return rep, nil
}

// declaresEntities reports whether the log in dir records entity shapes.
func declaresEntities(dir string) (bool, error) {
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		return false, err
	}
	defer l.Close()
	v, err := l.StreamVersion(events.SchemaStream)
	return v > 0, err
}

// restoreScratchPrefix names the folder a restore from the stream reads
// the stream into, beside its target: .hikoutei-restore-<pid>-<random>
// (earlier builds wrote no process id).
const restoreScratchPrefix = ".hikoutei-restore-"

// sweepRestoreScratch removes, beside the restore target to, the scratch
// folders of stream restores that were killed (SIGKILL, which nobody
// catches): those whose process no longer runs. An earlier build's (no
// process id) and a running process's are kept.
func sweepRestoreScratch(to string) {
	abs, err := filepath.Abs(to)
	if err != nil {
		return
	}
	parent := filepath.Dir(abs)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), restoreScratchPrefix)
		pidText, _, hasPID := strings.Cut(rest, "-")
		pid, perr := strconv.Atoi(pidText)
		if ok && hasPID && perr == nil && e.IsDir() && pid != os.Getpid() && !procs.Runs(pid) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}
