package hikoutei_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// Reading the log in process: the iterator and a named subscription
// (docs/subscriptions.md).
func ExampleStore_Subscribe() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "hikoutei-subscribe-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	u := store.Begin()
	if err := u.Persist(&Airport{ID: "LAX", Name: "Los Angeles"}); err != nil {
		log.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	// Everything from seq 1 up to the head, in order.
	for ev, err := range store.Events(ctx, 1) {
		if err != nil {
			log.Fatal(err)
		}
		if p, ok := ev.Payload.(events.EntityPersisted); ok {
			fmt.Println("persisted", p.Entity, p.ID)
		}
	}

	// A named subscription: the backlog, then each commit as it lands,
	// until ctx ends; run it again (after a restart too) to resume.
	err = store.Subscribe(ctx, "billing", func(ctx context.Context, ev hikoutei.Event) error {
		if ev.Type() == events.TypeEntityPersisted {
			fmt.Println("billing sees", ev.Stream)
			cancel() // this example stops here
		}
		return nil
	}, hikoutei.CheckpointEvery(100))
	fmt.Println(errors.Is(err, context.Canceled))
	// Output:
	// persisted Airport LAX
	// billing sees entity/Airport/LAX
	// true
}
