package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/doctor"
	"github.com/hikoutei/hikoutei-go/internal/progress"
	"github.com/hikoutei/hikoutei-go/internal/ratelimit"
)

// doctorProgressEvery is how often a check that counts records says how
// far it is (a new check is always said at once).
const doctorProgressEvery = 2 * time.Second

func newDoctorCmd() *cobra.Command {
	var dir, segments string
	var asJSON, showProgress bool
	cmd := &cobra.Command{
		Use:   "doctor --dir DIR [--segments URL] [--json] [--progress]",
		Short: "Check a store without changing it: lease.toml shape, log pages, checksums and hash chain, writer lease",
		Long: `doctor inspects a store directory read-only and prints one line per finding.
It validates lease.toml's closed four-key shape (schema, holder, operation,
acquired_at) and, when no other process has the store open, verifies the
checksum of every log record, every page of log.db (bbolt's own check
included) and that sequences run from 1 to the head; it reports every bad
sequence, not only the first. Then it walks the hash chain: a record that
is not what the chain committed to fails as chain_broken naming its
sequence; a chain that restarts after a hole (sequences a salvage or an
accepted log gap lost) is a chain_restarted warning: the store works, but
audit verify refuses it unless --accept-salvage-holes, and a pin taken
before the hole never vouches for the log after it. Exit 0 when healthy
(warnings allowed), 1 when a check failed, 2 on a usage error, 3 when the
log is damaged (log_corrupt, log_record_corrupt, chain_broken: run
hikoutei salvage or restore a backup), 5 when nothing failed but the log
has holes ("doctor: holes found").

On a large store the checks take a while (the read model is rebuilt from
the log to compare): doctor says on stderr which check runs and how far it
is when stderr is a terminal, or with --progress; never on stdout.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStoreDir(dir); err != nil {
				return err
			}
			if tempInStore != nil {
				return tempInStore // doctor rebuilds a read model in the temporary directory
			}
			var opts doctor.Options
			var err error
			if opts.Segments, err = openSegmentsFlag(cmd.Context(), segments, dir); err != nil {
				return err
			}
			defer closeSegments(opts.Segments)
			if showProgress || progress.IsTerminal(cmd.ErrOrStderr()) {
				opts.Progress = newDoctorProgress(cmd.ErrOrStderr(), time.Now).report
			}
			rep := doctor.CheckWith(dir, opts)
			if err := printReport(cmd, rep, asJSON); err != nil {
				return err
			}
			switch {
			case rep.Damaged():
				return errDamageFound
			case !rep.Healthy():
				return errProblemsFound
			case rep.Holes():
				return errHolesFound
			}
			return nil
		},
	}
	addDirFlag(cmd, &dir)
	addSegmentsFlag(cmd, &segments)
	addJSONFlag(cmd, &asJSON, shapeObject)
	cmd.Flags().BoolVar(&showProgress, "progress", false, "say on stderr which check runs and how far it is (the default when stderr is a terminal)")
	return cmd
}

// doctorProgress writes doctor's progress lines: one as each check
// starts, and at most one per doctorProgressEvery while a check that
// counts records advances.
type doctorProgress struct {
	w     io.Writer
	now   func() time.Time
	start time.Time
	limit *ratelimit.Limiter
	step  string
}

func newDoctorProgress(w io.Writer, now func() time.Time) *doctorProgress {
	return &doctorProgress{w: w, now: now, start: now(), limit: ratelimit.New(doctorProgressEvery, now)}
}

func (d *doctorProgress) report(p doctor.Progress) {
	elapsed := d.now().Sub(d.start).Round(time.Second)
	if p.Step != d.step {
		d.step = p.Step
		d.limit.Allow(p.Step) // the start counts as the step's first line
		fmt.Fprintf(d.w, "doctor: %s (%s elapsed)\n", p.Step, elapsed)
		return
	}
	if p.Total == 0 || !d.limit.Allow(p.Step) {
		return
	}
	fmt.Fprintf(d.w, "doctor: %s: %d of %d records, %d%% (%s elapsed)\n", p.Step, p.Done, p.Total, p.Done*100/p.Total, elapsed)
}

func printReport(cmd *cobra.Command, rep doctor.Report, asJSON bool) error {
	out := cmd.OutOrStdout()
	if asJSON {
		return printJSON(out, struct {
			doctor.Report
			Healthy bool `json:"healthy"`
			Damaged bool `json:"damaged"`
			Holes   bool `json:"holes"`
		}{rep, rep.Healthy() && !rep.Holes(), rep.Damaged(), rep.Holes()})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, f := range rep.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Severity, f.Check, f.Detail)
	}
	verdict := "healthy"
	switch {
	case rep.Damaged():
		verdict = "damage found"
	case !rep.Healthy():
		verdict = "problems found"
	case rep.Holes():
		verdict = "holes found (the log lost sequences; see the hash chain warning)"
	}
	fmt.Fprintf(tw, "\ndoctor: %s\n", verdict)
	return tw.Flush()
}
