package hikoutei_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// The tour of the API in docs/concepts.md is this file's text from "type
// Airport" to the end of Example, verbatim (TestDocsTourIsTheExample
// checks it).

// docs tour begins.

// Airport is a record of the application: one Go struct per entity.
type Airport struct {
	ID       string     `hikoutei:"id,pk"`         // exactly one string primary key (immutable)
	Name     string     `hikoutei:"name"`          // "name": the column
	Altitude int64      `hikoutei:"altitude,user"` // "user": people may edit it in the sheet
	Lat      float64    `hikoutei:"latitude"`      // float64: NaN and ±Inf are refused
	Opened   *time.Time `hikoutei:"opened"`        // pointer = nullable
	Scratch  string     `hikoutei:"-"`             // not stored
}

// A local-only store: commit a unit of work, read it back, query it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hikoutei-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, hikoutei.Entity[Airport]("Airport"))
	if errors.Is(err, hikoutei.ErrStoreLocked) {
		log.Fatal("another process has the store: ", err) // the error names the holder
	}
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close() // releases the lease: the next process opens at once

	u := store.Begin() // a unit of work: all or nothing
	if err := u.Persist(&Airport{ID: "GKA", Name: "Goroka", Altitude: 5282}); err != nil {
		log.Fatal(err)
	}
	if err := u.Persist(&Airport{ID: "MAG", Name: "Madang", Altitude: 20}); err != nil {
		log.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil { // durable in the log AND visible in SQLite
		log.Fatal(err)
	}

	a, err := hikoutei.Get[Airport](ctx, store, "GKA")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Name, a.Altitude)

	u2 := store.Begin()
	b, err := hikoutei.Get[Airport](ctx, u2, "GKA") // loaded THROUGH the unit: its key is tracked
	if err != nil {
		log.Fatal(err)
	}
	b.ID = "XXX"
	err = u2.Persist(b)
	fmt.Println(errors.Is(err, hikoutei.ErrPrimaryKeyChanged)) // a key never changes

	high, err := hikoutei.Find[Airport](ctx, store, hikoutei.Where("altitude", 5282),
		hikoutei.OrderByDesc("name"), hikoutei.Limit(10), hikoutei.Offset(0))
	if err != nil {
		log.Fatal(err)
	}
	one, err := hikoutei.FindOne[Airport](ctx, store, hikoutei.Where("name", "Madang"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(high), one.ID)
	// Output:
	// Goroka 5282
	// true
	// 1 MAG
}

// docs tour ends.

// A person chose "use the sheet's value" for a conflict: resolve it,
// idempotently by a command id, and tell a moved-on conflict apart.
func ExampleStore_ResolveConflict() {
	ctx := context.Background()
	var s *hikoutei.Store // an open store with sync
	var conflictID string // from s.Conflicts(ctx, hikoutei.ConflictOpen)
	if s == nil {
		return
	}
	res, err := s.ResolveConflict(ctx, conflictID, hikoutei.UseSheet, // or hikoutei.KeepSystem
		hikoutei.WithCommandID("review-4711"), // optional: idempotent by this id
		hikoutei.WithActor(hikoutei.ActorCLI)) // optional: who resolves (default ActorApplication)
	switch {
	case errors.Is(err, hikoutei.ErrConflictStale): // it moved on: list the conflicts again
	case err != nil: // conflict_not_found, conflict_not_open, conflict_blocked, command_id_reused, …
	default:
		fmt.Println(res.Outcome, res.ReconcileEffect) // applied, and the Input row's reconcile effect
	}
}
