// Package natsserver links the embedded NATS server (nats-server) into a
// program. A store starts one when its NATS options name no server URL:
// set Options.NATSServer to Embedded(). Programs that never embed a server
// (local-only stores, stores on an external NATS server, sync without NATS
// options) do not import this package and so do not link nats-server
// (docs/operations.md "Binary size").
package natsserver

import (
	"errors"
	"fmt"
	"net"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/hikoutei/hikoutei-go/internal/natsbus/serverspec"
)

// Starter starts embedded nats-servers; its zero value is ready to use.
type Starter struct{}

// Embedded returns the embedded server starter for Options.NATSServer.
func Embedded() Starter { return Starter{} }

// errNotReady: the server did not accept connections, or JetStream did not
// start, in time.
var errNotReady = errors.New("embedded nats-server not ready")

// StartServer starts a nats-server as spec says and waits until it
// accepts connections (and JetStream runs, when asked for).
func (Starter) StartServer(spec serverspec.ServerSpec) (serverspec.Server, error) {
	srv, err := server.NewServer(options(spec))
	if err != nil {
		return nil, err
	}
	srv.Start()
	if !srv.ReadyForConnections(spec.ReadyTimeout) {
		shutdown(srv)
		return nil, fmt.Errorf("%w: not ready within %s (listen %v)", errNotReady, spec.ReadyTimeout, spec.Listen)
	}
	if spec.JetStream && !srv.JetStreamEnabled() {
		shutdown(srv)
		return nil, fmt.Errorf("%w: JetStream did not start (store dir %q)", errNotReady, spec.StoreDir)
	}
	return running{srv}, nil
}

func options(spec serverspec.ServerSpec) *server.Options {
	opts := &server.Options{
		ServerName: spec.Name,
		DontListen: !spec.Listen,
		NoLog:      true,
		NoSigs:     true,
		MaxPayload: spec.MaxPayload,
		JetStream:  spec.JetStream,
		StoreDir:   spec.StoreDir,
		Nkeys:      users(spec.Users),
	}
	if spec.Listen {
		opts.Host, opts.Port = spec.Host, spec.Port
		if opts.Port == 0 {
			opts.Port = server.RANDOM_PORT
		}
	}
	if spec.JetStream {
		opts.JetStreamMaxMemory = spec.JetStreamMaxMemory
	}
	return opts
}

// users maps the spec's users: the in-process one gets every right, the
// listener's clients their permissions.
func users(us []serverspec.ServerUser) []*server.NkeyUser {
	if len(us) == 0 {
		return nil
	}
	out := make([]*server.NkeyUser, 0, len(us))
	for _, u := range us {
		if u.InProcessOnly {
			out = append(out, &server.NkeyUser{Nkey: u.Nkey,
				AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeInProcess: {}}})
			continue
		}
		out = append(out, &server.NkeyUser{Nkey: u.Nkey, Permissions: permissions(u.Permissions),
			AllowedConnectionTypes: map[string]struct{}{jwt.ConnectionTypeStandard: {}}})
	}
	return out
}

func permissions(p *serverspec.ServerPermissions) *server.Permissions {
	if p == nil {
		return nil
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: p.Publish},
		Subscribe: &server.SubjectPermission{Allow: p.Subscribe},
	}
}

// running adapts *server.Server to serverspec.Server.
type running struct{ *server.Server }

func (r running) Addr() net.Addr { return r.Server.Addr() }

func (r running) Shutdown() { shutdown(r.Server) }

func shutdown(srv *server.Server) {
	srv.Shutdown()
	srv.WaitForShutdown()
}
