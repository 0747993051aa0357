// Package gsync links sync to Google Sheets into a program: SyncFromEnv
// builds a store's SyncOptions, with a Google Sheets client (package
// sheetsio/gsheets), from the environment. Programs that never sync (local
// stores) do not import it and so do not link the Google API client, gRPC
// or Google's auth libraries (docs/operations.md "Binary size").
package gsync

import (
	"context"
	"fmt"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// SyncFromEnv builds SyncOptions from the environment: with
// HIKOUTEI_SYNC_SPREADSHEET_URL and either GOOGLE_APPLICATION_CREDENTIALS
// or HIKOUTEI_SHEETS_ENDPOINT set, it returns options that start the sync
// workers at Open (HIKOUTEI_SHEETS_CREDENTIALS_POOL adds the key files of
// a pool of service accounts, gsheets.Config.Pool); with HIKOUTEI_SYNC_SPREADSHEET_URL unset it returns nil
// (local-only: the store never touches the network). lookup is the process
// environment when nil. Errors (the store must not start half-configured)
// wrap hikoutei.ErrSyncStartup: an invalid URL or interval, missing or malformed
// credentials.
func SyncFromEnv(ctx context.Context, lookup func(string) (string, bool)) (*hikoutei.SyncOptions, error) {
	env, err := config.LoadSync(lookup)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", hikoutei.ErrSyncStartup, err)
	}
	if env.SpreadsheetURL == "" {
		return nil, nil
	}
	id, err := sheetsio.ParseSpreadsheetURL(env.SpreadsheetURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", hikoutei.ErrSyncStartup, hikoutei.EnvSpreadsheetURL, err)
	}
	cfg := gsheets.Config{Endpoint: env.Endpoint, CredentialsFile: env.Credentials}
	for _, f := range env.CredentialsPool {
		cfg.Pool = append(cfg.Pool, gsheets.Account{CredentialsFile: f})
	}
	if cfg.Endpoint != "" {
		cfg.CredentialsFile, cfg.Pool = "", nil
	}
	if d := env.RateLimitInterval; d > 0 {
		cfg.Pacing.ReadInterval, cfg.Pacing.WriteInterval = d, d
	}
	prov, err := gsheets.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", hikoutei.ErrSyncStartup, err)
	}
	// The cadences stay 0: Open resolves them from the same lookup.
	return &hikoutei.SyncOptions{SpreadsheetID: id, Provider: prov, LookupEnv: lookup}, nil
}
