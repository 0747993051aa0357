// Command quickstart is the README's first program: it opens a local store
// in ./airports.store, commits one record and reads it back.
package main

import (
	"context"
	"fmt"
	"log"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Airport is a record of the application: one Go struct per entity.
type Airport struct {
	ID       string `hikoutei:"id,pk"`         // the primary key: a string, never changed
	Name     string `hikoutei:"name"`          // a column
	Altitude int64  `hikoutei:"altitude,user"` // people may edit it in the sheet
}

func main() {
	ctx := context.Background()
	store, err := hikoutei.Open(ctx, "airports.store", hikoutei.Options{},
		hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		log.Fatal(err) // e.g. store_locked: another process has it open
	}
	defer store.Close()

	u := store.Begin() // a unit of work: all of it is committed, or nothing
	if err := u.Persist(&Airport{ID: "GKA", Name: "Goroka", Altitude: 5282}); err != nil {
		log.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil { // durable in the log, visible to reads
		log.Fatal(err)
	}
	a, err := hikoutei.Get[Airport](ctx, store, "GKA")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Name, a.Altitude)
}
