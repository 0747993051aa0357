package gsheets

import (
	"context"
	"errors"
	"sync/atomic"
)

// lastFailure is the newest outcome of the provider's API calls: the
// error of the newest call that failed (after its retries), or nil once a
// later call succeeded. Reading it never waits (sync health reads it).
type lastFailure struct{ err atomic.Pointer[error] }

// note records the outcome of one API call. A call abandoned because its
// own context ended (the caller stopped) says nothing about the
// spreadsheet and is not recorded.
func (l *lastFailure) note(ctx context.Context, err error) {
	switch {
	case err == nil:
		l.err.Store(nil)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
	default:
		l.err.Store(&err)
	}
}

func (l *lastFailure) load() error {
	if p := l.err.Load(); p != nil {
		return *p
	}
	return nil
}

// LastFailure is the error of the provider's newest API call when it
// failed (after the read retries): an *Error or a *WriteError, whose
// cause HTTPStatus reaches. It is nil before any call and once a later
// call succeeded. It never waits on the network: health reports read it
// while a request hangs.
func (p *Provider) LastFailure() error { return p.failure.load() }
