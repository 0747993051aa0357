package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// defaultCallTimeout bounds a call whose context has no deadline.
const defaultCallTimeout = 2 * time.Minute

// Call sends one request for op with body req to the channel of store
// directory dir and decodes the response body into resp (which may be
// nil). Errors: ErrUnavailable when nobody serves the channel; a
// *RemoteError (errors.Is against the code's sentinel) when the server
// answered with a failure — resp is still filled when the answer carried
// a body; ErrBadResponse; I/O errors. A server that answers before
// reading the whole request (a refused peer) may close the connection
// while the request is being written: its answer is still read.
//
// A server serving its maximum of connections answers admin_busy without
// reading the request: Call tries again with a backoff until the
// deadline.
func Call(ctx context.Context, dir string, op Op, req, resp any) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(defaultCallTimeout)
	}
	for wait := busyBackoffMin; ; wait = min(2*wait, busyBackoffMax) {
		err := call(ctx, dir, op, req, resp, deadline)
		if !errors.Is(err, ErrBusy) || time.Until(deadline) < wait || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// Backoff between calls answered admin_busy.
const (
	busyBackoffMin = 20 * time.Millisecond
	busyBackoffMax = 500 * time.Millisecond
)

func call(ctx context.Context, dir string, op Op, req, resp any, deadline time.Time) error {
	c, err := dialPath(SocketPath(dir), time.Until(deadline))
	if err != nil {
		return err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	_ = c.SetDeadline(deadline)
	werr := writeRequest(c, op, req)
	_ = c.CloseWrite()
	err = readResponse(io.LimitReader(c, maxResponseBytes), resp)
	if werr != nil && errors.Is(err, ErrBadResponse) {
		return werr // no answer: the write's failure says why
	}
	return err
}

func writeRequest(w io.Writer, op Op, req any) error {
	r := Request{Version: Version, Op: op}
	if req != nil {
		b, err := json.Marshal(req)
		if err != nil {
			return fmt.Errorf("encode the request: %w", err)
		}
		r.Body = b
	}
	return json.NewEncoder(w).Encode(r)
}

func readResponse(r io.Reader, resp any) error {
	var out Response
	if err := json.NewDecoder(r).Decode(&out); err != nil {
		return fmt.Errorf("%w: %w", ErrBadResponse, err)
	}
	if out.Version != Version {
		return fmt.Errorf("%w: version %d", ErrBadResponse, out.Version)
	}
	if resp != nil && len(out.Body) > 0 {
		if err := json.Unmarshal(out.Body, resp); err != nil {
			return fmt.Errorf("%w: body: %w", ErrBadResponse, err)
		}
	}
	if !out.OK {
		return &RemoteError{Code: out.Code, Codes: out.Codes, Message: out.Message}
	}
	return nil
}
