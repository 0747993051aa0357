package observe_test

import (
	"log/slog"
	"runtime"
)

func runtimeVersion() string { return runtime.Version() }

// quietLogger discards the store's log lines.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
