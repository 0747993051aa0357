// Command localonly is a complete local-only program: it declares an
// entity, opens a store, commits a unit of work, reads and queries it,
// and closes the store. It never touches the network.
//
//	go run ./examples/localonly -dir /tmp/airports
//
// Without -dir it uses a temporary directory and removes it at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Airport is the application's record.
type Airport struct {
	ID       string `hikoutei:"id,pk"`
	Name     string `hikoutei:"name"`
	Altitude int64  `hikoutei:"altitude"`
}

func main() {
	dir := flag.String("dir", "", "store directory (default: a temporary one, removed at exit)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *dir); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, dir string) error {
	if dir == "" {
		tmp, err := os.MkdirTemp("", "hikoutei-localonly-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	store, err := hikoutei.Open(ctx, dir, hikoutei.Options{}, hikoutei.Entity[Airport]("Airport"))
	if err != nil {
		return err
	}
	defer store.Close()

	u := store.Begin()
	for _, a := range []Airport{{"GKA", "Goroka", 5282}, {"MAG", "Madang", 20}, {"HGU", "Mount Hagen", 5388}} {
		if err := u.Persist(&a); err != nil {
			return err
		}
	}
	res, err := u.Commit(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("committed %d events\n", res.Events)

	a, err := hikoutei.Get[Airport](ctx, store, "HGU")
	if err != nil {
		return err
	}
	fmt.Printf("get: %s %s %d\n", a.ID, a.Name, a.Altitude)
	list, err := hikoutei.Find[Airport](ctx, store, hikoutei.OrderByDesc("altitude"))
	if err != nil {
		return err
	}
	for _, a := range list {
		fmt.Printf("find: %s %d\n", a.ID, a.Altitude)
	}
	high, err := hikoutei.Count[Airport](ctx, store, hikoutei.WhereCmp("altitude", hikoutei.Ge, 5000))
	if err != nil {
		return err
	}
	fmt.Printf("count altitude >= 5000: %d\n", high)
	some, err := hikoutei.Find[Airport](ctx, store, hikoutei.WhereIn("id", "MAG", "GKA"), hikoutei.WherePrefix("name", "Go"))
	if err != nil {
		return err
	}
	fmt.Printf("in and prefix: %s\n", some[0].Name)
	return store.Close()
}
