package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// campaignResult is what every campaign (crash, storage, converge, evolve) ends with.
type campaignResult interface {
	Line() string // the campaign's last line
	OK() bool     // no problem found
}

// interruptible is ctx cancelled by SIGINT/SIGTERM: a long-running
// command (serve, demo, a campaign) stops cleanly and still reports.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	ownSignals.Store(true)
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
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
