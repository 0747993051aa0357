package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/replication"
)

// streamConnectTimeout bounds connecting to the cluster.
const streamConnectTimeout = 10 * time.Second

// replicatedSource names a store's replicated log stream (replicated
// mode) and how to reach it.
type replicatedSource struct {
	url, store, nkey string
}

// resolve fills the URL from HIKOUTEI_NATS_URL when --nats is not given.
func (s *replicatedSource) resolve() error {
	if s.url == "" {
		s.url = config.NATSURL(nil)
	}
	if s.url == "" {
		return usageError{errors.New("--store needs --nats URL (or HIKOUTEI_NATS_URL)")}
	}
	return nil
}

// connect opens a client of the cluster that fails over between its URLs.
func (s replicatedSource) connect() (*nats.Conn, error) {
	opts := []nats.Option{nats.Name("hikoutei-" + s.store + "-reader"), nats.Timeout(streamConnectTimeout)}
	if s.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(s.nkey)
		if err != nil {
			return nil, fmt.Errorf("%w: --nats-nkey %s: not a user nkey seed", replication.ErrConfigInvalid, s.nkey)
		}
		opts = append(opts, o)
	}
	nc, err := nats.Connect(s.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: connect: %v", replication.ErrUnavailable, err)
	}
	return nc, nil
}

// catchUpInto applies every commit of the stream, through its head as of
// the call, to a new log at path, and returns that log's head. The
// running store is never touched: only the stream is read. The new log
// has the store id every host's log of the store has: the one the stream
// was claimed for (the first primary's; its records' hash chain starts
// from it), or the store's name for a stream no primary claimed.
func (s replicatedSource) catchUpInto(ctx context.Context, path string) (uint64, error) {
	nc, err := s.connect()
	if err != nil {
		return 0, err
	}
	defer nc.Close()
	stream, err := replication.OpenExisting(ctx, nc, s.store)
	if err != nil {
		return 0, err
	}
	id, err := stream.StoreID(ctx)
	if err != nil {
		return 0, err
	}
	if id == "" {
		id = s.store
	}
	l, err := events.OpenLog(path, events.Options{StoreID: id})
	if err != nil {
		return 0, err
	}
	err = replication.CatchUp(ctx, stream, l)
	head, herr := l.Head()
	return head, errors.Join(err, herr, l.Close())
}
