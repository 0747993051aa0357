package hikoutei

import (
	"context"
	"fmt"
	"os"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Environment variables of the sync auto-start (seed 001).
const (
	// EnvSpreadsheetURL is the spreadsheet to sync to (a Google Sheets URL
	// or a bare id).
	EnvSpreadsheetURL = "HIKOUTEI_SYNC_SPREADSHEET_URL"
	// EnvCredentials is Google's standard service-account key file variable.
	EnvCredentials = "GOOGLE_APPLICATION_CREDENTIALS"
	// EnvSheetsEndpoint points the provider at an emulator (e.g.
	// `hikoutei fake-sheets`) instead of Google; no credentials are needed.
	EnvSheetsEndpoint = "HIKOUTEI_SHEETS_ENDPOINT"
)

// SyncFromEnv builds SyncOptions from the environment: with
// HIKOUTEI_SYNC_SPREADSHEET_URL and either GOOGLE_APPLICATION_CREDENTIALS
// or HIKOUTEI_SHEETS_ENDPOINT set, it returns options that start the sync
// workers at Open; with HIKOUTEI_SYNC_SPREADSHEET_URL unset it returns nil
// (local-only: the store never touches the network). lookup is os.LookupEnv
// when nil. Errors (the store must not start half-configured):
// sheetsio codes invalid_spreadsheet_url, credentials_missing,
// credentials_not_json, credentials_incomplete, sync_startup_failed.
func SyncFromEnv(ctx context.Context, lookup func(string) (string, bool)) (*SyncOptions, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	url, _ := lookup(EnvSpreadsheetURL)
	if url == "" {
		return nil, nil
	}
	id, err := sheetsio.ParseSpreadsheetURL(url)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSyncStartup, EnvSpreadsheetURL, err)
	}
	cfg := sheetsio.Config{LookupEnv: lookup}
	cfg.Endpoint, _ = lookup(EnvSheetsEndpoint)
	cfg.CredentialsFile, _ = lookup(EnvCredentials)
	if cfg.Endpoint != "" {
		cfg.CredentialsFile = ""
	}
	prov, err := sheetsio.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	return &SyncOptions{SpreadsheetID: id, Provider: prov}, nil
}
