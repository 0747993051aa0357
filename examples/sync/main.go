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
	if err := store.WaitSynced(ctx); err != nil { // the spreadsheet holds every commit
		return err
	}
	st, err := store.Stats(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("synced: %d effects applied, none pending\n", st.Outbox["applied"])
	return store.Close()
}
