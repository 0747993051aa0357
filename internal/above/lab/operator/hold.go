package operator

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// Item is what the campaign's stores hold.
type Item struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name"`
}

// ItemEntity declares Item.
var ItemEntity = hikoutei.Entity[Item]("Item")

// Hold is the running store of a campaign (`hikoutei-lab operator-hold`):
// it opens the store in dir (creating it when missing, with its
// administrative channel, as serve does), prints "held", then commits one
// item every interval and prints "ack ID" once each commit returned, "err
// CODE" for a refused one, until ctx ends; then it closes the store. Its
// lease lasts 2 s (heartbeat every 0.5 s), so after a kill -9 the next
// holder takes the store over within 2 s.
func Hold(ctx context.Context, dir string, out io.Writer, interval time.Duration) error {
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Operation: "operator-hold", LeaseTTL: 2 * time.Second,
		HeartbeatInterval: 500 * time.Millisecond}, ItemEntity)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	say := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...); w.Flush() }
	say("held")
	n := 0
	for ctx.Err() == nil {
		id := fmt.Sprintf("h%06d-%d", n, time.Now().UnixNano())
		n++
		u := s.Begin()
		if err := u.Persist(&Item{ID: id, Name: "held"}); err != nil {
			say("err %s", hikoutei.ErrorCode(err))
		} else if _, err := u.Commit(context.Background()); err != nil {
			say("err %s", hikoutei.ErrorCode(err))
		} else {
			say("ack %s", id)
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval):
		}
	}
	return s.Close()
}
