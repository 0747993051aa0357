package hikoutei

import (
	"net/http"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/wakehook"
)

// WakeHookOptions configure Store.WakeHandler.
type WakeHookOptions struct {
	// Secret is the key shared with whatever signs the wakes (the Apps
	// Script of docs/wake-hook.md): at least 32 bytes, e.g. the text of
	// the wake.key file `hikoutei serve --http` makes, or 32 random bytes
	// of your own. Keep it like a password; it is never logged.
	Secret []byte
	// MinInterval is the least time between two polls that wakes start
	// (default 2 s): a flood of wakes costs at most one poll per
	// interval, each tab's poll being one read of the Sheets quota.
	MinInterval time.Duration
	// OnResult, when set, hears each request's result, for a metric:
	// "polled", "scheduled" or "coalesced" when accepted, else the
	// refusal's code (wake_malformed, wake_signature_invalid, wake_stale,
	// wake_replayed, wake_busy, wake_standby, wake_sync_not_running). It
	// is called on the request's goroutine.
	OnResult func(result string)
}

// WakeHandler returns the wake hook's handler for an application to mount
// (POST only): a request signed with the shared secret, dated within 5
// minutes of the store's clock and with a nonce not seen before wakes
// the Input pollers, which then poll at once instead of at their next
// tick. It answers 202 {"result": …} when accepted and 400, 401 or 503
// {"error": code} when refused; a refused request polls nothing, and
// accepted ones poll at most once per MinInterval. A signed wake the
// store would not poll for is refused with 503 and a reason:
// wake_standby while it is not the active writer (a standby, a writer
// another displaced), wake_sync_not_running while its poller does not
// run (sync stopped, provisioning failing, SyncOptions.Manual, the store
// closed). Polling on the timer goes on regardless: a lost wake costs
// freshness, never correctness.
// Errors: ErrWakeSecretInvalid; ErrSyncNotConfigured when the store's
// pollers take no wake-ups.
func (s *Store) WakeHandler(o WakeHookOptions) (http.Handler, error) {
	if _, err := s.e.PollVia(); err != nil {
		return nil, err
	}
	h, err := wakehook.NewHandler(wakehook.Config{Secret: o.Secret, Clock: s.e.Clock(), MinInterval: o.MinInterval,
		OnResult: o.OnResult, Poll: func(h wakehook.Hint) { _, _ = s.e.RequestPollHint(h) }, Ready: s.e.WakeReady})
	if err != nil {
		return nil, err
	}
	return h, nil
}
