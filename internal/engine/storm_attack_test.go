package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// stormSheet serves a new emulator through a handler that counts the
// requests reaching it; the provider takes its default backoff and no
// pacing, so only the backoff (and Retry-After) holds requests back.
func stormSheet(t *testing.T) (*hikouteitest.Sheet, *atomic.Int64) {
	var requests atomic.Int64
	count := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1); h.ServeHTTP(w, r) })
	}
	return serveSheet(t, emulator.New(emulator.Options{AutoCreate: true}), count, plainProvider), &requests
}

// openQuick opens a store of airports whose workers run on the real
// clock with short cadences, so that a worker that hammers a failing
// spreadsheet sends hundreds of requests a second.
func openQuick(t *testing.T, sheet *hikouteitest.Sheet) *hikoutei.Store {
	so := sheet.SyncOptions()
	so.Manual, so.AuthorityTTL = false, testLeaseTTL
	so.Interval, so.ProbeDelay, so.RetryBase, so.RetryMax = 20*time.Millisecond, 50*time.Millisecond, 20*time.Millisecond, time.Second
	so.PollingInterval, so.FullScanInterval, so.ReconcileInterval = 50*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	s, err := hikoutei.Open(t.Context(), t.TempDir(), hikoutei.Options{HeartbeatInterval: -1, AcquireWait: -1, Sync: so, LeaseTTL: testLeaseTTL,
		Logger: quiet, NATS: &hikoutei.NATSOptions{Disabled: true}}, airports...)
	mustT(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// A storm of 429s (every request refused for seconds) loses and
// duplicates nothing: commits go on at once, health names the quota
// while it lasts, the workers back off (a few requests a second, not
// one every pass of 20 ms), and once the quota is back every row is
// written exactly once.
func TestA429StormBacksOffNamesTheQuotaAndConverges(t *testing.T) {
	sheet, requests := stormSheet(t)
	s := openQuick(t, sheet)
	for i := range 10 {
		commit(t, s, &Airport{ID: fmt.Sprintf("a%d", i), Name: "before"})
	}
	waitSynced(t, s)
	sheet.Emulator.SetFaultRates(emulator.FaultRates{P429: 1, RetryAfter: time.Second})
	start := time.Now()
	for i := 10; i < 30; i++ {
		commit(t, s, &Airport{ID: fmt.Sprintf("a%d", i), Name: "during"})
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("20 commits in the storm took %v", d)
	}
	eventually(t, "health naming the quota", func() bool {
		h := s.Health()
		return h.SyncHealth != nil && h.SyncHealth.Reason == hikoutei.ReasonQuota && h.Sync != nil &&
			strings.Contains(h.Sync.Error(), string(hikoutei.ReasonQuota))
	})
	before, window := requests.Load(), 3*time.Second
	time.Sleep(window) // the measurement's window, not a synchronisation
	n := requests.Load() - before
	t.Logf("%d requests in %v of the storm", n, window)
	if n > 30 {
		t.Errorf("%d requests in %v of 429s with Retry-After 1 s: the workers hammer the spreadsheet", n, window)
	}
	if h := s.Health().SyncHealth; h.Reason != hikoutei.ReasonQuota {
		t.Errorf("sync health late in the storm: %s %q", h.State, h.Reason)
	}
	sheet.Emulator.ClearFaults()
	waitSynced(t, s)
	wantRowsOnce(t, sheet, "Airport_System", 30)
	if h := s.Health(); h.Sync != nil || h.SyncHealth.Failing() {
		t.Fatalf("health once the quota is back: %v %+v", h.Sync, h.SyncHealth)
	}
}

// waitSynced waits (at most a minute) until the workers wrote what was
// committed.
func waitSynced(t *testing.T, s *hikoutei.Store) {
	t.Helper()
	c, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	mustT(t, s.WaitSynced(c))
}

// wantRowsOnce checks that tab shows n rows, each anchor once (blank rows
// a person inserted aside).
func wantRowsOnce(t *testing.T, sheet *hikouteitest.Sheet, tab string, n int) {
	t.Helper()
	rows, err := sheet.Person().Displayed(tab)
	mustT(t, err)
	seen := map[string]int{}
	blank := 0
	for _, r := range rows[1:] {
		if strings.Join(r, "") == "" {
			blank++
			continue
		}
		seen[anchorOf(rows[0], r)]++
	}
	for a, k := range seen {
		if k != 1 {
			t.Errorf("%s: anchor %q shown %d times", tab, a, k)
		}
	}
	if len(rows)-1-blank != n || len(seen) != n {
		t.Fatalf("%s: %d rows, %d anchors, want %d", tab, len(rows)-1, len(seen), n)
	}
}
