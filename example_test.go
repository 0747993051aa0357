package hikoutei_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Airport is the entity of the examples.
type Airport struct {
	IATA  string `hikoutei:"iata,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

// A local-only store: commit a unit of work, read it back.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "hikoutei-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	s, err := hikoutei.Open(dir, hikoutei.Options{}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	u := s.Begin()
	if err := u.Persist(&Airport{IATA: "GKA", Name: "Goroka"}); err != nil {
		log.Fatal(err)
	}
	if _, err := u.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	a, err := hikoutei.Get[Airport](ctx, s, "GKA")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Name)
	// Output: Goroka
}

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
