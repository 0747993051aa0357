package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/internal/doctor"
)

func newDoctorCmd() *cobra.Command {
	var dir string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor --dir DIR [--json]",
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
has holes ("doctor: holes found").`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireStoreDir(dir); err != nil {
				return err
			}
			if tempInStore != nil {
				return tempInStore // doctor rebuilds a read model in the temporary directory
			}
			rep := doctor.Check(dir)
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
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
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
