package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
)

func newPollCmd() *cobra.Command {
	var dir, natsURL, store, nkey string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "poll (--dir DIR | --store NAME) [--nats URL] [--nats-nkey FILE] [--json]",
		Short: "Ask a running service to poll its Input tabs now (publishes hikoutei.<store>.wake.poll)",
		Long: `poll publishes a wake-up hint on hikoutei.<store>.wake.poll. The store name
is the store directory's base name (or --store). The service must be
reachable over NATS: --nats or HIKOUTEI_NATS_URL (a service on the embedded
server listens only with serve --nats-listen). A listening service requires
authentication: --nats-nkey FILE, by default DIR/nats-client.nk when --dir
holds one. A hint is not a command: the pollers also run on their own timers.`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if store == "" && dir == "" {
				return usageError{fmt.Errorf("give --dir or --store")}
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
			if natsURL == "" {
				natsURL = config.NATSURL(nil)
			}
			if natsURL == "" {
				return usageError{fmt.Errorf("no NATS server: give --nats or set %s", hikoutei.EnvNATSURL)}
			}
			if err := config.ParseNATSURL(natsURL); err != nil {
				return usageError{fmt.Errorf(`flag "--nats": %w`, err)}
			}
			if nkey == "" && dir != "" {
				if _, err := os.Stat(filepath.Join(dir, engine.ClientSeedFile)); err == nil {
					nkey = filepath.Join(dir, engine.ClientSeedFile)
				}
			}
			return publishPoll(cmd, natsbus.Config{Store: store, URL: natsURL, NkeyFile: nkey}, asJSON)
		},
	}
	addDirFlag(cmd, &dir)
	cmd.Flags().StringVar(&store, "store", "", "store name in subjects (default: the directory's base name)")
	cmd.Flags().StringVar(&natsURL, "nats", "", "NATS URL of the running service (default $HIKOUTEI_NATS_URL)")
	cmd.Flags().StringVar(&nkey, "nats-nkey", "", "nkey user seed file to authenticate with (default DIR/nats-client.nk when present)")
	addJSONFlag(cmd, &asJSON, shapeObject)
	return cmd
}

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
		return printJSON(cmd.OutOrStdout(), map[string]string{"store": cfg.Store, "subject": subject})
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "published %s\n", subject)
	return err
}
