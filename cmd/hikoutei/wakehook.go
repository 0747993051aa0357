package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
	"github.com/hikoutei/hikoutei-go/observe"
)

// wakeKeyFile holds the wake hook's shared secret in the store directory.
const wakeKeyFile = "wake.key"

// minWakeInterval is the least --wake-min-interval serve accepts.
const minWakeInterval = time.Second

// newWakeHook is the handler of serve's POST /wake: wakes signed with the
// secret of DIR/wake.key (made 0600 when missing) wake the pollers of the
// store serve runs now for the tabs they name, at most once per
// minInterval; a signed wake the
// store would not poll for (a standby, sync not running) is refused with
// 503 wake_standby or wake_sync_not_running. It sits outside
// the bearer token: the Apps Script holds only the wake key, which can
// cost a poll and read nothing.
func newWakeHook(dir string, cur current, minInterval time.Duration, m *observe.Metrics, logger *slog.Logger) (http.Handler, error) {
	path := filepath.Join(dir, wakeKeyFile)
	secret, created, err := wakehook.LoadOrCreateKey(path)
	if err != nil {
		return nil, fmt.Errorf("wake hook: %w", err)
	}
	h, err := wakehook.NewHandler(wakehook.Config{Secret: secret, Clock: events.SystemClock{}, MinInterval: minInterval,
		OnResult: m.WakeResult, Poll: func(h wakehook.Hint) { _, _ = engine.Of(cur()).RequestPollHint(h) },
		Ready: func() *wakehook.NotReady { return engine.Of(cur()).WakeReady() }})
	if err != nil {
		return nil, fmt.Errorf("wake hook: %s: %w", path, err)
	}
	logger.Info("wake hook", "path", "POST /wake", "key_file", path, "key_created", created, "min_interval", minInterval.String())
	return h, nil
}
