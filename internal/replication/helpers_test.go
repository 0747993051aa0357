package replication

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// deadline bounds every wait of these tests.
const deadline = replicationtest.Deadline

// opTimeout bounds one Append or lease call.
const opTimeout = 3 * time.Second

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func openLog(t testing.TB, nc *nats.Conn, store string, replicas int) *Log {
	t.Helper()
	l, err := Open(ctxFor(t, deadline), nc, Config{Store: store, Replicas: replicas})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

func openLeases(t testing.TB, nc *nats.Conn, clock Clock) *LeaseStore {
	t.Helper()
	s, err := OpenLeases(ctxFor(t, deadline), nc, LeaseConfig{Clock: clock, TTL: events.DefaultLeaseTTL})
	if err != nil {
		t.Fatalf("OpenLeases: %v", err)
	}
	return s
}

// rec is the i-th test record.
func rec(who string, i int) []byte { return fmt.Appendf(nil, "%s-record-%d", who, i) }

// appendResolved appends and, on ErrUnavailable, retries the same commit
// until the answer is definite, as the engine must.
func appendResolved(t testing.TB, l *Log, expected uint64, records [][]byte) (uint64, error) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		seq, err := l.Append(ctx, expected, records)
		cancel()
		if err == nil || !errors.Is(err, ErrUnavailable) || time.Now().After(end) {
			return seq, err
		}
	}
}

// readAll returns every commit of l's stream.
func readAll(t testing.TB, l *Log) []Commit {
	t.Helper()
	var out []Commit
	if err := l.ReadFrom(ctxFor(t, deadline), 1, func(c Commit) error {
		out = append(out, c)
		return nil
	}); err != nil {
		t.Fatalf("ReadFrom: %v", err)
	}
	return out
}
