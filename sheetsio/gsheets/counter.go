package gsheets

import (
	"context"
	"sync/atomic"
)

// requestCounter counts the HTTP requests one operation issues and the
// bytes of its batchUpdate bodies.
type requestCounter struct {
	reads, writes, chunks, bytes atomic.Int64
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

// countBytes adds n bytes of a batchUpdate body (each attempt sent).
func countBytes(ctx context.Context, n int) {
	if c := counterFrom(ctx); c != nil {
		c.bytes.Add(int64(n))
	}
}
