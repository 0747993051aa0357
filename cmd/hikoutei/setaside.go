package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/disk"
)

// setAsideFlags are the flags of `hikoutei setaside`.
type setAsideFlags struct {
	dir       string
	olderThan time.Duration
	delete    bool
	asJSON    bool
}

func newSetAsideCmd() *cobra.Command {
	var f setAsideFlags
	cmd := &cobra.Command{
		Use:   "setaside --dir DIR [--older-than AGE [--delete]] [--json]",
		Short: "List the read models the store set aside, and delete those older than an age once inspected",
		Long: `setaside lists the read models the store set aside in DIR and never deletes:
read.sqlite.unusable-<time> (unusable when the store opened), .before-rebuild-<time>
(replaced by replay --dir or a restore) and .ahead-of-log-<time> (ahead of a log
that lost records), each with its -wal and -shm, their size and when they were
set aside (the time in the name, UTC). They may hold the only trace of data a
damaged log lost, and personal values erased from the live store: inspect them
(hikoutei replay --from, sqlite3) before deleting them.

--older-than AGE lists only those set aside longer ago than AGE (e.g. 720h);
with --delete it deletes them, and nothing else: not the live read model, not
a file whose name is not one the store gives, not a directory or a symbolic
link with such a name. --delete needs --older-than, and refuses (store_locked,
nothing deleted) while a process holds the store or rebuilds its read model.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(f.dir); err != nil {
				return err
			}
			if cmd.Flags().Changed("older-than") && f.olderThan <= 0 {
				return usageError{errors.New("--older-than needs a positive age (e.g. --older-than 720h)")}
			}
			if f.delete && f.olderThan <= 0 {
				return usageError{errors.New("--delete needs --older-than with a positive age (e.g. --older-than 720h)")}
			}
			rep, err := runSetAside(f, time.Now())
			if err != nil {
				return err
			}
			return printSetAside(cmd.OutOrStdout(), rep, f.asJSON)
		},
	}
	addDirFlag(cmd, &f.dir)
	cmd.Flags().DurationVar(&f.olderThan, "older-than", 0, "only the read models set aside longer ago than this (e.g. 720h)")
	cmd.Flags().BoolVar(&f.delete, "delete", false, "delete them (needs --older-than; refused while a process holds the store)")
	addJSONFlag(cmd, &f.asJSON, shapeObject)
	return cmd
}

// setAsideJSON is one set-aside file as `setaside --json` and status
// print it.
type setAsideJSON struct {
	File    string    `json:"file"`
	Kind    string    `json:"kind"` // unusable, before-rebuild, ahead-of-log
	At      time.Time `json:"set_aside_at"`
	Bytes   int64     `json:"bytes"`
	Deleted bool      `json:"deleted,omitempty"`
}

// setAsideReport is what `setaside --json` prints: the files listed
// (those older than --older-than when given) and the figures of all
// that are left (after --delete, those it kept).
type setAsideReport struct {
	Copies int            `json:"copies"`
	Bytes  int64          `json:"bytes"`
	Oldest *time.Time     `json:"oldest,omitempty"`
	Files  []setAsideJSON `json:"files"`
	Errors []string       `json:"errors,omitempty"` // files that could not be deleted, and why
}

// runSetAside lists the set-aside read models of f.dir and, with
// f.delete, deletes those set aside before now−f.olderThan, holding the
// store (a shared lock on log.db: no writer opens it) and its rebuild lock.
func runSetAside(f setAsideFlags, now time.Time) (setAsideReport, error) {
	if f.delete {
		release, err := holdStoreForSetAside(f.dir)
		if err != nil {
			return setAsideReport{}, err
		}
		defer release()
	}
	s, err := disk.ReadSetAside(f.dir)
	if err != nil {
		return setAsideReport{}, fmt.Errorf("list the store directory: %w", err)
	}
	rep := setAsideReport{Files: []setAsideJSON{}}
	listed := s.Files
	if f.olderThan > 0 {
		listed = s.OlderThan(now.Add(-f.olderThan))
	}
	for _, sf := range listed {
		j := setAsideJSON{File: sf.Name, Kind: sf.Kind, At: sf.At, Bytes: sf.Bytes}
		if f.delete {
			if err := disk.RemoveSetAside(f.dir, sf); err != nil {
				rep.Errors = append(rep.Errors, err.Error())
			} else {
				j.Deleted = true
			}
		}
		rep.Files = append(rep.Files, j)
	}
	if f.delete { // the figures of what is left
		if s, err = disk.ReadSetAside(f.dir); err != nil {
			return rep, fmt.Errorf("list the store directory: %w", err)
		}
	}
	rep.Copies, rep.Bytes = s.Copies, s.Bytes
	if !s.Oldest.IsZero() {
		rep.Oldest = &s.Oldest
	}
	return rep, nil
}

// holdStoreForSetAside takes dir's log.db shared (no writer can open the
// store, which may set a read model aside as it opens) and its rebuild
// lock (no rebuild sets one aside), or refuses with store_locked.
func holdStoreForSetAside(dir string) (func(), error) {
	f, err := os.Open(filepath.Join(dir, events.LogFileName)) // a failure here is no lock: say what it is
	if err != nil {
		return nil, fmt.Errorf("open the store's log to hold the store: %w", err)
	}
	_ = f.Close()
	unshare, ok := events.ShareLog(dir)
	if !ok {
		return nil, events.DescribeLocked(dir, &events.StoreLockedError{})
	}
	unlock, err := events.LockRebuild(dir)
	if err != nil {
		unshare()
		return nil, err
	}
	return func() { unlock(); unshare() }, nil
}

// printSetAside prints rep: one line per file, then the totals.
func printSetAside(w io.Writer, rep setAsideReport, asJSON bool) error {
	if asJSON {
		return errors.Join(printJSON(w, rep), notDeleted(rep))
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, f := range rep.Files {
		state := ""
		if f.Deleted {
			state = "deleted"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d bytes\t%s\n", f.File, f.Kind, f.At.Format(time.RFC3339), f.Bytes, state)
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(tw, "NOT DELETED\t%s\n", quoteControls(e))
	}
	fmt.Fprintf(tw, "set aside\t%d read models, %s\n", rep.Copies, byteText(rep.Bytes))
	return errors.Join(tw.Flush(), notDeleted(rep))
}

// notDeleted is errSetAsideNotDeleted when rep holds files --delete
// could not delete (nil otherwise), in either output form.
func notDeleted(rep setAsideReport) error {
	if rep.Errors == nil {
		return nil
	}
	return fmt.Errorf("%w: %d files", errSetAsideNotDeleted, len(rep.Errors))
}
