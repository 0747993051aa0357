package hikoutei_test

import (
	"context"
	"fmt"
	"log"
	"os"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Time travel: read the store as it was after an earlier commit.
func ExampleStore_AsOf() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hikoutei-asof-example-")
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
	if err := u.Persist(&Airport{ID: "GKA", Name: "Goroka", Altitude: 5282}); err != nil {
		log.Fatal(err)
	}
	first, err := u.Commit(ctx)
	if err != nil {
		log.Fatal(err)
	}
	u = store.Begin()
	if err := u.Persist(&Airport{ID: "GKA", Name: "Goroka", Altitude: 5300}); err != nil {
		log.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	view, err := store.AsOf(ctx, hikoutei.AtSeq(first.LastSeq))
	if err != nil {
		log.Fatal(err)
	}
	defer view.Close()
	then, err := hikoutei.Get[Airport](ctx, view, "GKA")
	if err != nil {
		log.Fatal(err)
	}
	now, err := hikoutei.Get[Airport](ctx, store, "GKA")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(then.Altitude, now.Altitude, view.Seq() == first.LastSeq)
	// Output: 5282 5300 true
}
