package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// interruptible is ctx cancelled by SIGINT/SIGTERM: a long-running
// command (serve, demo, a campaign) stops cleanly and still reports.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	ownSignals.Store(true)
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}
