package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/admin"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
)

func newPollCmd() *cobra.Command {
	var dir, natsURL, store, nkey string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "poll (--dir DIR | --store NAME) [--nats URL] [--nats-nkey FILE] [--json]",
		Short: "Ask the running service to poll its Input tabs now (over its administrative channel, or hikoutei.<store>.wake.poll on NATS)",
		Long: `poll asks the process that serves a store to poll its Input tabs now.
With --dir and no --nats, the request goes to that process over the store's
administrative channel (the same host, the store owner's user): no NATS is
needed. When nothing serves the store it fails with store_not_running (exit
1): start hikoutei serve --dir DIR, whose pollers also run on their own
timers. With --store, or --nats, or HIKOUTEI_NATS_URL set and no process
answering on the channel, it publishes a wake-up hint on
hikoutei.<store>.wake.poll instead (a service on the embedded server listens
only with serve --nats-listen). The store name is the store directory's base
name (or --store). A listening service requires authentication: --nats-nkey
FILE, by default DIR/nats-client.nk when --dir holds one. A hint is not a
command: the pollers also run on their own timers.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if store == "" && dir == "" {
				return usageError{fmt.Errorf("give --dir or --store")}
			}
			if natsURL != "" {
				if err := config.ParseNATSURL(natsURL); err != nil {
					return usageError{fmt.Errorf(`flag "--nats": %w`, err)}
				}
			}
			if dir != "" {
				if err := requireStore(dir); err != nil {
					return err
				}
			}
			if store == "" {
				abs, _ := filepath.Abs(dir)
				store = natsbus.SanitizeStore(filepath.Base(abs))
			}
			if dir != "" && natsURL == "" {
				if handled, err := pollViaChannel(cmd, dir, store, asJSON); handled || config.NATSURL(nil) == "" {
					return err
				}
			}
			if natsURL == "" {
				natsURL = config.NATSURL(nil)
			}
			if natsURL == "" {
				return usageError{fmt.Errorf("no NATS server for --store: give --nats or set %s (or give --dir of a store served on this host)", hikoutei.EnvNATSURL)}
			}
			if nkey == "" && dir != "" {
				if _, err := os.Stat(filepath.Join(dir, engine.ClientSeedFile)); err == nil {
					nkey = filepath.Join(dir, engine.ClientSeedFile)
				}
			}
			return publishPoll(cmd, natsbus.Config{Store: store, URL: natsURL, NkeyFile: nkey}, asJSON)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "store directory served on this host (or --store)")
	cmd.Flags().StringVar(&store, "store", "", "store name in subjects (default: the directory's base name)")
	cmd.Flags().StringVar(&natsURL, "nats", "", "NATS URL of the running service (default: the store's administrative channel with --dir, else $HIKOUTEI_NATS_URL)")
	cmd.Flags().StringVar(&nkey, "nats-nkey", "", "nkey user seed file to authenticate with (default DIR/nats-client.nk when present)")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

// pollResult is what `poll --json` prints: the store, how the request
// went (admin_channel or nats) and, over NATS, the subject.
type pollResult struct {
	Store   string `json:"store"`
	Via     string `json:"via"`
	Subject string `json:"subject,omitempty"`
}

// pollViaChannel asks the process serving dir to poll, over its
// administrative channel. handled is false when nobody answers there;
// err then says why, with a stable code: admin_channel_absent when a
// process holds the store without a channel, else store_not_running.
func pollViaChannel(cmd *cobra.Command, dir, store string, asJSON bool) (handled bool, err error) {
	var resp admin.PollResponse
	handled, err = viaChannel(cmd.Context(), dir, admin.OpSyncPoll, admin.PollRequest{}, &resp)
	if !handled {
		return false, notServed(dir)
	}
	if err != nil {
		return true, err
	}
	res := pollResult{Store: store, Via: "admin_channel"}
	if asJSON {
		return true, printJSON(cmd.OutOrStdout(), res)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "asked the running service of %s to poll (over its administrative channel)\n", dir)
	return true, err
}

// notServed is why no process answered for store dir.
func notServed(dir string) error {
	lf, err := events.ReadLeaseFile(dir)
	if err == nil && !holderGone(dir) {
		return fmt.Errorf("%w: %s holds the store (operation %q) without an administrative channel (an older version, or shutting down): give --nats with its NATS URL, or restart it",
			admin.ErrHeldWithoutChannel, lf.Holder, lf.Operation)
	}
	leftover := ""
	if err == nil {
		leftover = fmt.Sprintf(" (lease.toml names %s, which no longer holds it: a run that ended without closing, killed or crashed; the next open reconciles it)", lf.Holder)
	}
	return fmt.Errorf("%w: no process holds %s%s, so nothing polls its sheet: start `hikoutei serve --dir %s` (its pollers also run on their own timers)",
		errStoreNotRunning, dir, leftover, shellWord(dir))
}

// holderGone reports whether the process lease.toml names is gone: it
// neither holds log.db's file lock (that lock dies with its process, on
// kill -9 too) nor answers on the administrative channel (a process whose
// log.db was replaced under it holds the lock of the old file only).
func holderGone(dir string) bool {
	held, known := events.WriterHolds(dir)
	if !known || held {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return errors.Is(admin.Call(ctx, dir, admin.OpStatus, nil, nil), admin.ErrUnavailable)
}

// errStoreNotRunning: a command that needs the store's running service
// found no process serving it.
var errStoreNotRunning = errors.New("store_not_running")

func publishPoll(cmd *cobra.Command, cfg natsbus.Config, asJSON bool) error {
	bus, err := natsbus.Start(context.Background(), cfg)
	if err != nil {
		return err
	}
	bus.WakePoll()
	if err := bus.Close(); err != nil {
		return err
	}
	subject := bus.Subject(natsbus.SuffixWakePoll)
	if asJSON {
		return printJSON(cmd.OutOrStdout(), pollResult{Store: cfg.Store, Via: "nats", Subject: subject})
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "published %s\n", subject)
	return err
}
