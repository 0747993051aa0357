package hikoutei

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// Open resolves the poller cadences from the options, then the
// environment, then the 60 s default; a malformed variable (config's I20
// rule: plain positive decimal integers of milliseconds only) fails Open
// with sync_startup_failed.
func TestOpenFailsWithSyncStartupOnAMalformedCadenceAndResolvesTheOthers(t *testing.T) {
	for _, bad := range []string{"0x10", "1e3", "+100", "-100", "1.5", " 100", "100 ", "0", "00100", "9007199254740992", "１００", "10_000", "abc"} {
		for _, env := range []string{config.EnvPollingInterval, config.EnvFullScanInterval} {
			_, err := Open(t.Context(), t.TempDir(), Options{Clock: events.NewManualClock(t0), HeartbeatInterval: -1, AcquireWait: -1,
				Sync: &SyncOptions{SpreadsheetID: "sheet-under-test", Provider: &gsheets.Provider{}, Manual: true,
					LookupEnv: func(k string) (string, bool) { return bad, k == env }}}, Entity[Airport]("Airport"))
			if !errors.Is(err, ErrSyncStartup) || err.Error()[:len("sync_startup_failed")] != "sync_startup_failed" {
				t.Fatalf("%s=%q: Open returned %v, want sync_startup_failed", env, bad, err)
			}
		}
	}
	maxInterval := time.Duration(math.MaxInt64/int64(time.Millisecond)) * time.Millisecond
	for _, tc := range []struct {
		env, val string
		opt      time.Duration
		want     time.Duration
	}{{"", "", 0, 60 * time.Second}, {config.EnvPollingInterval, "", 0, 60 * time.Second}, {config.EnvPollingInterval, "1500", 0, 1500 * time.Millisecond},
		{config.EnvPollingInterval, "86400000", 0, 24 * time.Hour},
		{config.EnvPollingInterval, "9007199254740991", 0, maxInterval}, {config.EnvPollingInterval, "0x10", 5 * time.Second, 5 * time.Second}} {
		o := SyncOptions{PollingInterval: tc.opt, LookupEnv: func(k string) (string, bool) { return tc.val, k == tc.env }}
		c, err := syncConfig(o)
		if err != nil || c.PollingInterval != tc.want || c.FullScanInterval != config.DefaultFullScanInterval {
			t.Fatalf("%s=%q option %v: %v, got %v / %v", tc.env, tc.val, tc.opt, err, c.PollingInterval, c.FullScanInterval)
		}
	}
}
