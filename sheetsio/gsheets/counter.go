package gsheets

import (
	"context"
	"sync/atomic"
)

// requestCounter counts the HTTP requests one operation issues.
type requestCounter struct {
	reads, writes, chunks atomic.Int64
}

type counterKey struct{}

func withCounter(ctx context.Context) (context.Context, *requestCounter) {
	c := &requestCounter{}
	return context.WithValue(ctx, counterKey{}, c), c
}

func counterFrom(ctx context.Context) *requestCounter {
	c, _ := ctx.Value(counterKey{}).(*requestCounter)
	return c
}

func countRead(ctx context.Context) {
	if c := counterFrom(ctx); c != nil {
		c.reads.Add(1)
	}
}

func countWrite(ctx context.Context) {
	if c := counterFrom(ctx); c != nil {
		c.writes.Add(1)
	}
}

func countChunk(ctx context.Context) {
	if c := counterFrom(ctx); c != nil {
		c.chunks.Add(1)
	}
}
