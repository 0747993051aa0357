package admin

import (
	"errors"
	"slices"
)

// Sentinel errors of the administrative channel. Each error's text is its
// stable code; the same code travels in a Response, and the client turns it
// back into an error that errors.Is matches (see RemoteError).
var (
	// ErrUnavailable: no process serves the channel at this store (no
	// socket, or a stale socket nobody listens on).
	ErrUnavailable = errors.New("admin_unavailable")
	// ErrHeldWithoutChannel: a process holds the store but serves no admin
	// channel (an older version, or a store opened with NoAdmin).
	ErrHeldWithoutChannel = errors.New("admin_channel_absent")
	// ErrStoreClosing: the store is shutting down; the request was not run.
	ErrStoreClosing = errors.New("store_closing")
	// ErrMalformedRequest: the request is not one JSON envelope of the
	// protocol (bad JSON, unknown keys, a missing op, a bad body).
	ErrMalformedRequest = errors.New("admin_request_malformed")
	// ErrRequestTooLarge: the request exceeds MaxRequestBytes.
	ErrRequestTooLarge = errors.New("admin_request_too_large")
	// ErrRequestTimeout: the client did not send its request (or read the
	// response) before the server's deadline.
	ErrRequestTimeout = errors.New("admin_request_timeout")
	// ErrVersionUnsupported: the request's protocol version is not Version.
	ErrVersionUnsupported = errors.New("admin_version_unsupported")
	// ErrOpUnsupported: no handler is registered for the request's op.
	ErrOpUnsupported = errors.New("admin_op_unsupported")
	// ErrPeerRejected: the connecting process runs under another uid.
	ErrPeerRejected = errors.New("admin_peer_rejected")
	// ErrSocketInUse: Listen found a live socket at the path (another
	// process answers there); it is never removed.
	ErrSocketInUse = errors.New("admin_socket_in_use")
	// ErrListen: the socket could not be created.
	ErrListen = errors.New("admin_listen_failed")
	// ErrBadResponse: the server's answer is not a protocol response.
	ErrBadResponse = errors.New("admin_response_malformed")
	// ErrHandlerFailed: a handler failed with an error that has no code
	// registered with the server (the message says what).
	ErrHandlerFailed = errors.New("admin_handler_failed")
	// ErrBusy: the server serves Config.MaxConns requests already; the
	// request was not read. Try again.
	ErrBusy = errors.New("admin_busy")
	// ErrAcceptFailed: the channel cannot accept connections now (e.g.
	// too many open files); it keeps trying and recovers by itself
	// (Server.AcceptErr, the store's Health().Admin).
	ErrAcceptFailed = errors.New("admin_accept_failed")
)

// codes are the channel's own sentinels, always known to the server.
var codes = []error{ErrStoreClosing, ErrMalformedRequest, ErrRequestTooLarge, ErrRequestTimeout, ErrVersionUnsupported,
	ErrOpUnsupported, ErrPeerRejected, ErrHandlerFailed, ErrBusy}

// RemoteError is an error the server answered with. It matches (errors.Is)
// any error whose text is its Code or one of its Codes, so a client tests
// it against the same sentinels the store's error matches in process
// (hikoutei.ErrConflictNotOpen and hikoutei.ErrAckRejected, …), and its
// text is the store's one-line message.
type RemoteError struct {
	Code    string
	Codes   []string // every registered code the error matched, Code first
	Message string
}

func (e *RemoteError) Error() string {
	if e.Message == "" || e.Message == e.Code {
		return e.Code
	}
	return e.Message
}

// Is reports whether target's text is one of this error's codes.
func (e *RemoteError) Is(target error) bool {
	if target == nil {
		return false
	}
	code := target.Error()
	return code == e.Code || slices.Contains(e.Codes, code)
}
