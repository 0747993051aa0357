package admin

import (
	"context"
	"encoding/json"
	"fmt"
)

// Handler runs one request's body and returns the response body (encoded
// even with an error, so a stale command can report its outcome).
type Handler func(ctx context.Context, body json.RawMessage) (any, error)

// Typed adapts a function of typed request and response structs to a
// Handler; the body is decoded strictly (ErrMalformedRequest).
func Typed[Req, Resp any](fn func(context.Context, Req) (Resp, error)) Handler {
	return func(ctx context.Context, body json.RawMessage) (any, error) {
		var req Req
		if len(body) == 0 {
			body = json.RawMessage("{}")
		}
		if err := decodeStrict(body, &req); err != nil {
			return nil, fmt.Errorf("%w: body: %w", ErrMalformedRequest, err)
		}
		return fn(ctx, req)
	}
}

// Backend is what a store offers the channel today. The root package's
// store implements it; NewMux registers it.
type Backend interface {
	Status(ctx context.Context) (StatusResponse, error)
	AcknowledgeSystem(ctx context.Context, req AckRequest) (AckResponse, error)
	ResolveConflict(ctx context.Context, req ResolveRequest) (AckResponse, error)
	DismissQuarantine(ctx context.Context, req DismissRequest) (DismissResponse, error)
}

// Mux dispatches requests by op. It is filled before Listen and read-only
// afterwards.
type Mux struct{ handlers map[Op]Handler }

// NewMux returns a Mux with b's operations registered.
func NewMux(b Backend) *Mux {
	m := &Mux{handlers: map[Op]Handler{}}
	m.Handle(OpStatus, Typed(func(ctx context.Context, _ struct{}) (StatusResponse, error) { return b.Status(ctx) }))
	m.Handle(OpConflictAck, Typed(b.AcknowledgeSystem))
	m.Handle(OpConflictResolve, Typed(b.ResolveConflict))
	m.Handle(OpQuarantineDismiss, Typed(b.DismissQuarantine))
	return m
}

// Handle registers h for op (replacing any earlier one): the extension
// point for OpConflictResolve, OpQuarantineDismiss and later commands.
func (m *Mux) Handle(op Op, h Handler) { m.handlers[op] = h }

// dispatch runs the handler of r.Op.
func (m *Mux) dispatch(ctx context.Context, r Request) (any, error) {
	h, ok := m.handlers[r.Op]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrOpUnsupported, r.Op)
	}
	return h(ctx, r.Body)
}
