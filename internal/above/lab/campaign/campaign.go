// Package campaign holds what the sync campaigns (internal/above/lab/converge, the
// damage campaign; internal/above/lab/evolve, the evolution campaign) share: an
// emulated spreadsheet served over HTTP, the real Sheets client and the
// store options they run with (workers on short cadences), the comparison
// of every tab with canonical state and what open conflicts and active
// quarantine excuse, the judgement of sync health after the last act, the
// anchors a tab shows twice, and the reading of the log.
package campaign

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// Sheets is an emulated Google Sheets served over HTTP: the stores reach
// it through the real sheets/v4 client, people act on it through
// Emu.Person.
type Sheets struct {
	Emu *emulator.Emulator
	URL string
	srv *httptest.Server
}

// ServeSheets starts an emulator (spreadsheets created on first use)
// seeded with seed.
func ServeSheets(seed int64) *Sheets { return ServeObservedSheets(seed, nil) }

// ServeObservedSheets is ServeSheets with an observer of every access to
// cells (emulator.Options.Observe; nil for none).
func ServeObservedSheets(seed int64, observe emulator.Observer) *Sheets {
	emu := emulator.New(emulator.Options{AutoCreate: true, Seed: seed, Observe: observe})
	srv := httptest.NewServer(emu.Handler())
	return &Sheets{Emu: emu, URL: srv.URL, srv: srv}
}

// Close stops serving.
func (s *Sheets) Close() { s.srv.Close() }

// Provider is the real Sheets client against url: unpaced, with a short
// backoff and request timeout (a campaign's emulator answers at once).
func Provider(ctx context.Context, url string, logger *slog.Logger) (*gsheets.Provider, error) {
	return gsheets.New(ctx, gsheets.Config{Endpoint: url, Logger: logger,
		Pacing:         gsheets.Pacing{ReadInterval: -1, WriteInterval: -1},
		Backoff:        gsheets.Backoff{Initial: 5 * time.Millisecond, Max: 50 * time.Millisecond, Attempts: 3},
		RequestTimeout: 5 * time.Second})
}

// StoreOptions are the options of a campaign's store: its workers run
// (not Manual) on short cadences — dispatch every 50 ms, reconciliation
// every reconcile, polling every half of it and a full scan every one —
// syncing to sheetID through prov; a short lease, so a reopen never waits
// long.
func StoreOptions(operation string, logger *slog.Logger, sheetID string, prov *gsheets.Provider, reconcile time.Duration) hikoutei.Options {
	return hikoutei.Options{Operation: operation, Logger: logger, LeaseTTL: 2 * time.Second,
		HeartbeatInterval: 250 * time.Millisecond, AcquireWait: 15 * time.Second,
		Sync: &hikoutei.SyncOptions{SpreadsheetID: sheetID, Provider: prov, MaxBatch: 200,
			Interval: 50 * time.Millisecond, ProbeDelay: 200 * time.Millisecond, MaxProbes: 6,
			RetryBase: 50 * time.Millisecond, RetryMax: 400 * time.Millisecond, ReconcileInterval: reconcile,
			PollingInterval: reconcile / 2, FullScanInterval: reconcile}}
}
