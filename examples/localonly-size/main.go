// Command localonly-size is the smallest useful local-only program: it
// declares an entity, opens a store, commits a unit of work, reads it back
// and closes the store. It never touches the network, and its binary is the
// one measured in docs/operations.md "Binary size" (the test
// TestLocalOnlyProgramLinksNoSyncOrNATS keeps it free of the Sheets, gRPC and
// NATS server packages).
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Airport is the program's only entity.
type Airport struct {
	IATA string `hikoutei:"iata,pk"`
	Name string `hikoutei:"name"`
}

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "hikoutei-localonly-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		return err
	}
	defer s.Close()

	u := s.Begin()
	if err := u.Persist(&Airport{IATA: "GKA", Name: "Goroka"}); err != nil {
		return err
	}
	if _, err := u.Commit(ctx); err != nil {
		return err
	}
	a, err := hikoutei.Get[Airport](ctx, s, "GKA")
	if err != nil {
		return err
	}
	fmt.Println(a.Name)
	return nil
}
