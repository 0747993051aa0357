// Package serverspec describes the embedded NATS server a natsbus.Bus
// needs (its options, users and permissions) without linking nats-server:
// package natsserver implements ServerStarter with it, and only programs
// that import that package link the server.
package serverspec

import (
	"net"
	"time"
)

// ServerStarter starts the embedded NATS server of a natsbus.Bus whose Config has
// no URL. This package only describes the server (ServerSpec) so that a
// program that never embeds a server does not link nats-server; package
// natsserver implements it.
type ServerStarter interface {
	StartServer(ServerSpec) (Server, error)
}

// Server is a running embedded server as the Bus uses it.
type Server interface {
	// InProcessConn opens the Bus's in-process client connection
	// (nats.InProcessServer).
	InProcessConn() (net.Conn, error)
	// ClientURL is the server's client URL (ignored by the in-process dialer).
	ClientURL() string
	// Addr is the client listener's address (nil without a listener).
	Addr() net.Addr
	// Shutdown stops the server and waits until it has stopped.
	Shutdown()
}

// ServerSpec is what the embedded server must be.
type ServerSpec struct {
	Name string
	// Listen: serve clients on Host:Port (Port 0 = a free port); false =
	// no listener at all, in-process connections only.
	Listen     bool
	Host       string
	Port       int
	MaxPayload int32
	// JetStream with its StoreDir and memory limit.
	JetStream          bool
	StoreDir           string
	JetStreamMaxMemory int64
	// Users are the nkey users (none: no authentication).
	Users []ServerUser
	// ReadyTimeout bounds the wait until the server accepts connections.
	ReadyTimeout time.Duration
}

// ServerUser is one nkey user of the embedded server.
type ServerUser struct {
	Nkey string
	// InProcessOnly: the store's own connection, with every right, allowed
	// in process only; otherwise a client on the listener with Permissions.
	InProcessOnly bool
	Permissions   *ServerPermissions
}

// ServerPermissions are the subjects a listener's client may publish to
// and subscribe to (everything else is denied).
type ServerPermissions struct {
	Publish, Subscribe []string
}
