package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
)

// campaignResult is what every campaign (crash, storage, converge, evolve) ends with.
type campaignResult interface {
	Line() string // the campaign's last line
	OK() bool     // no problem found
}

// endCampaign prints the campaign's last line and turns its outcome into
// the command's: the run's error, else errProblemsFound when it found any.
func endCampaign(out io.Writer, res campaignResult, err error) error {
	fmt.Fprintln(out, res.Line())
	if err != nil {
		return err
	}
	if !res.OK() {
		return errProblemsFound
	}
	return nil
}

// countedResult is a sync campaign's result: its last line, its outcome
// and the line of counts before it.
type countedResult interface {
	campaignResult
	Counts() string // what each kind of act and outcome counted
}

// runSyncCampaign runs one of the in-process sync campaigns (converge,
// evolve) in a fresh directory removed afterwards: the header line, the
// run, its elapsed time and problems, its counts, then its last line.
func runSyncCampaign[R countedResult](cmd *cobra.Command, name, header string, run func(context.Context, string, io.Writer) (R, int, error)) error {
	dir, err := os.MkdirTemp(userTempDir(), "hikoutei-"+name+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx, stop := interruptible(cmd.Context())
	defer stop()
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s: %s\n", name, header)
	start := time.Now()
	res, problems, err := run(ctx, dir, out)
	fmt.Fprintf(out, "%s: elapsed=%s problems=%d\n", name, time.Since(start).Round(time.Second), problems)
	fmt.Fprintln(out, res.Counts())
	return endCampaign(out, res, err)
}
