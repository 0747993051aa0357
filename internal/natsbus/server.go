package natsbus

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/internal/natsbus/serverspec"
)

// The embedded server as the Bus sees it (see package serverspec; package
// natsserver implements ServerStarter).
type (
	ServerStarter     = serverspec.ServerStarter
	Server            = serverspec.Server
	ServerSpec        = serverspec.ServerSpec
	ServerUser        = serverspec.ServerUser
	ServerPermissions = serverspec.ServerPermissions
)

// startEmbedded starts cfg.Server for cfg.
func startEmbedded(cfg Config, users []ServerUser) (Server, error) {
	if cfg.Server == nil {
		return nil, fmt.Errorf("%w: no NATS URL and no embedded server (natsserver.Embedded) configured", ErrServerNotLinked)
	}
	spec := ServerSpec{Name: "hikoutei-" + cfg.Store, MaxPayload: EmbeddedMaxPayload,
		JetStream: cfg.JetStream || cfg.Mirror.Enabled, StoreDir: cfg.StoreDir, Users: users, ReadyTimeout: cfg.ConnectTimeout}
	if cfg.Listen != "" {
		host, port, err := splitListen(cfg.Listen)
		if err != nil {
			return nil, err
		}
		spec.Listen, spec.Host, spec.Port = true, host, port
	}
	if spec.JetStream {
		// Keep the embedded JetStream modest by default on small machines.
		spec.JetStreamMaxMemory = 256 << 20
	}
	srv, err := cfg.Server.StartServer(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrServerStartFailed, err)
	}
	return srv, nil
}
