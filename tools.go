//go:build tools

// Package hikoutei: tools.go pins modules that later packages import.
package hikoutei

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/cespare/xxhash/v2"
	_ "github.com/nats-io/nats-server/v2/server"
	_ "github.com/nats-io/nats.go"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/schollz/progressbar/v3"
	_ "github.com/spf13/cobra"
	_ "go.etcd.io/bbolt"
	_ "golang.org/x/text/unicode/norm"
	_ "golang.org/x/time/rate"
	_ "google.golang.org/api/sheets/v4"
	_ "zombiezen.com/go/sqlite"
)
