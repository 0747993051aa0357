package hikoutei_test

import (
	"context"
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
