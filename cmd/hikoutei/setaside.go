package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	copies    []string // --copy: the copies named
	delete    bool
	asJSON    bool
}

func newSetAsideCmd() *cobra.Command {
	var f setAsideFlags
	cmd := &cobra.Command{
		Use:   "setaside --dir DIR [--older-than AGE | --copy NAME]... [--delete] [--json]",
		Short: "List the read models the store set aside, and delete those older than an age, or named, once inspected",
		Long: `setaside lists the read models the store set aside in DIR and never deletes:
read.sqlite.unusable-<time> (unusable when the store opened), .before-rebuild-<time>
(replaced by replay --dir or a restore) and .ahead-of-log-<time> (ahead of a log
that lost records), each with its -wal and -shm, their size and when they were
set aside (the time in the name, UTC). They may hold the only trace of data a
damaged log lost, and personal values erased from the live store: inspect them
(hikoutei replay --from, sqlite3) before deleting them.

--older-than AGE lists only those set aside longer ago than AGE (e.g. 720h);
--copy NAME (repeatable) only the copy NAME, as listed, with its -wal and -shm.
With --delete it deletes them, and nothing else: not the live read model, not
a file whose name is not one the store gives, not a directory or a symbolic
link with such a name. A copy dated more than a day after this machine's time
(its clock was wrong when it was set aside, or the directory was copied from
elsewhere) has no known age: it is listed as FUTURE-DATED, --older-than never
selects it, --copy does. --delete needs --older-than or --copy, and refuses
(store_locked, nothing deleted) while a process holds the store or rebuilds its
read model.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStore(f.dir); err != nil {
				if f.delete {
					return fmt.Errorf("%w; nothing deleted", err)
				}
				return err
			}
			if err := f.check(cmd.Flags().Changed("older-than")); err != nil {
				return err
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
	cmd.Flags().StringArrayVar(&f.copies, "copy", nil, "only the set-aside copy NAME, with its -wal and -shm (repeatable)")
	cmd.Flags().BoolVar(&f.delete, "delete", false, "delete them (needs --older-than or --copy; refused while a process holds the store)")
	addJSONFlag(cmd, &f.asJSON, shapeObject)
	return cmd
}

// check refuses flags that do not select what --delete would delete
// (exit 2): an age that is not positive (given: agedGiven), an age and
// names together, --delete with neither, a name that is no copy's.
func (f setAsideFlags) check(agedGiven bool) error {
	switch {
	case agedGiven && f.olderThan <= 0:
		return usageError{errors.New("--older-than needs a positive age (e.g. --older-than 720h)")}
	case agedGiven && len(f.copies) > 0:
		return usageError{errors.New("give --older-than or --copy, not both")}
	case f.delete && f.olderThan <= 0 && len(f.copies) == 0:
		return usageError{errors.New("--delete needs --older-than with a positive age (e.g. --older-than 720h) or --copy NAME")}
	}
	for _, name := range f.copies {
		sf, ok := disk.ParseSetAside(name)
		if !ok {
			return usageError{fmt.Errorf("--copy %s: not a name the store gives a set-aside read model "+
				"(read.sqlite.<kind>-<time>, as setaside lists it)", quoteControls(name))}
		}
		if sf.Name != sf.Copy {
			return usageError{fmt.Errorf("--copy %s names a sidecar: name its copy, %s (its -wal and -shm go with it)", name, sf.Copy)}
		}
	}
	return nil
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
// (those older than --older-than, or of the copies --copy names, when
// given) and the figures of all that are left (after --delete, those it
// kept).
type setAsideReport struct {
	Copies int            `json:"copies"`
	Bytes  int64          `json:"bytes"`
	Oldest *time.Time     `json:"oldest,omitempty"`
	Files  []setAsideJSON `json:"files"`
	Errors []string       `json:"errors,omitempty"` // files that could not be deleted, and why
	// FutureDated names the copies left whose time is more than a day
	// after now (disk.FutureSlack): no age selects them, --copy does.
	FutureDated []string `json:"future_dated,omitempty"`

	dir string // the store directory, for the commands printed
}

// runSetAside lists the set-aside read models of f.dir and, with
// f.delete, deletes those f selects (set aside before now−f.olderThan, or
// of the copies f.copies names), holding the store (a shared lock on
// log.db: no writer opens it) and its rebuild lock.
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
		return setAsideReport{}, err
	}
	listed, err := f.selected(s, now)
	if err != nil {
		return setAsideReport{}, err
	}
	rep := setAsideReport{Files: []setAsideJSON{}, dir: f.dir}
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
			return rep, err
		}
	}
	rep.Copies, rep.Bytes, rep.FutureDated = s.Copies, s.Bytes, s.FutureDated(now)
	if !s.Oldest.IsZero() {
		rep.Oldest = &s.Oldest
	}
	return rep, nil
}

// selected is the files of s that f selects: those of the copies
// f.copies names (a name s does not hold is not_set_aside, and nothing is
// selected), else those set aside before now−f.olderThan, else all.
func (f setAsideFlags) selected(s disk.SetAside, now time.Time) ([]disk.SetAsideFile, error) {
	if len(f.copies) == 0 && f.olderThan <= 0 {
		return s.Files, nil
	}
	if len(f.copies) == 0 {
		return s.OlderThan(now.Add(-f.olderThan)), nil
	}
	var out []disk.SetAsideFile
	for i, name := range f.copies {
		files := s.Copy(name)
		if len(files) == 0 {
			return nil, fmt.Errorf("%w: no read model set aside as %s in %s (`hikoutei setaside --dir %s` lists them); nothing deleted",
				disk.ErrNotSetAside, name, f.dir, shellWord(f.dir))
		}
		if !slices.Contains(f.copies[:i], name) {
			out = append(out, files...)
		}
	}
	return out, nil
}

// holdStoreForSetAside takes dir's log.db shared (no writer can open the
// store, which may set a read model aside as it opens) and its rebuild
// lock (no rebuild sets one aside), or refuses with store_locked.
func holdStoreForSetAside(dir string) (func(), error) {
	path := filepath.Join(dir, events.LogFileName) // a failure here is no lock: say what it is
	if info, err := os.Stat(path); err == nil && !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is a %s, not the store's log file; nothing deleted", disk.ErrStoreLogUnopenable, path,
			events.FileKind(info.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: open it to hold the store: %w; nothing deleted", disk.ErrStoreLogUnopenable, err)
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
	for _, name := range rep.FutureDated {
		fmt.Fprintf(tw, "FUTURE-DATED\t%s: set aside at a time after this machine's (its clock was wrong then, or the directory "+
			"was copied): its age is unknown, so --older-than never selects it; once inspected, `hikoutei setaside --dir %s --copy %s "+
			"--delete` deletes it\n", name, shellWord(rep.dir), name)
	}
	fmt.Fprintf(tw, "set aside\t%s, %s\n", disk.ReadModels(rep.Copies), byteText(rep.Bytes))
	return errors.Join(tw.Flush(), notDeleted(rep))
}

// notDeleted is errSetAsideNotDeleted when rep holds files --delete
// could not delete (nil otherwise), in either output form.
func notDeleted(rep setAsideReport) error {
	switch len(rep.Errors) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%w: 1 file", errSetAsideNotDeleted)
	}
	return fmt.Errorf("%w: %d files", errSetAsideNotDeleted, len(rep.Errors))
}
