// Command sync is a complete program that syncs a store to a spreadsheet:
// it declares an entity, opens a store with the sync options the
// environment gives, commits, waits until the spreadsheet holds what it
// committed, and closes the store.
//
// The environment names the spreadsheet (docs/configuration.md):
//
//	HIKOUTEI_SYNC_SPREADSHEET_URL   the spreadsheet (a URL or a bare id)
//	GOOGLE_APPLICATION_CREDENTIALS  a service-account key (docs/google-sheets.md)
//	HIKOUTEI_SHEETS_ENDPOINT        or an emulator instead of Google, e.g.
//	                                `hikoutei fake-sheets`
//
//	go run ./examples/sync -dir /tmp/airports -timeout 2m
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/gsync"
)

// Airport is the application's record; people may edit its notes.
type Airport struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

func main() {
	dir := flag.String("dir", "", "store directory (default: a temporary one, removed at exit)")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long to wait for the spreadsheet")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *dir, *timeout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string, timeout time.Duration) error {
	sync, err := gsync.SyncFromEnv(ctx, nil)
	if err != nil {
		return err
	}
	if sync == nil {
		return errors.New("set " + hikoutei.EnvSpreadsheetURL + " (and credentials or an emulator endpoint)")
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hikoutei-sync-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	store, err := hikoutei.Open(ctx, dir, hikoutei.Options{Sync: sync}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		return err
	}
	defer store.Close()

	u := store.Begin()
	for _, a := range []Airport{{"GKA", "Goroka", ""}, {"MAG", "Madang", "coastal"}} {
		if err := u.Persist(&a); err != nil {
			return err
		}
	}
	if _, err := u.Commit(ctx); err != nil { // never waits on the spreadsheet
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	applied, err := waitSynced(ctx, store)
	if err != nil {
		return err
	}
	fmt.Printf("synced: %d effects applied, none pending\n", applied)
	return store.Close()
}

// waitSynced checks the outbox every 200 ms until nothing is waiting to
// be written and something was applied.
func waitSynced(ctx context.Context, store *hikoutei.Store) (int64, error) {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		st, err := store.Stats(ctx)
		if err != nil {
			return 0, err
		}
		o := st.Outbox
		waiting := o[aggregates.EffectPending] + o[aggregates.EffectProcessing] + o[aggregates.EffectUncertain]
		if waiting == 0 && o[aggregates.EffectApplied] > 0 {
			return o[aggregates.EffectApplied], nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("spreadsheet not in sync (%d effects waiting; sync: %v): %w", waiting, store.Health().Sync, ctx.Err())
		case <-tick.C:
		}
	}
}
