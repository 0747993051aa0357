package hikoutei

import (
	"context"
	"fmt"

	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// Environment variables of sync (see the README's configuration table).
const (
	// EnvSpreadsheetURL is the spreadsheet to sync to (a Google Sheets URL
	// or a bare id).
	EnvSpreadsheetURL = config.EnvSpreadsheetURL
	// EnvCredentials is Google's standard service-account key file variable.
	EnvCredentials = config.EnvCredentials
	// EnvSheetsEndpoint points the provider at an emulator (e.g.
	// `hikoutei fake-sheets`) instead of Google; no credentials are needed.
	EnvSheetsEndpoint = config.EnvSheetsEndpoint
	// EnvNATSURL names an existing NATS server or cluster.
	EnvNATSURL = config.EnvNATSURL
)

// SyncFromEnv builds SyncOptions from the environment: with
// HIKOUTEI_SYNC_SPREADSHEET_URL and either GOOGLE_APPLICATION_CREDENTIALS
// or HIKOUTEI_SHEETS_ENDPOINT set, it returns options that start the sync
// workers at Open; with HIKOUTEI_SYNC_SPREADSHEET_URL unset it returns nil
// (local-only: the store never touches the network). lookup is the process
// environment when nil. Errors (the store must not start half-configured)
// wrap ErrSyncStartup: an invalid URL or interval, missing or malformed
// credentials.
func SyncFromEnv(ctx context.Context, lookup func(string) (string, bool)) (*SyncOptions, error) {
	env, err := config.LoadSync(lookup)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	if env.SpreadsheetURL == "" {
		return nil, nil
	}
	id, err := sheetsio.ParseSpreadsheetURL(env.SpreadsheetURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSyncStartup, EnvSpreadsheetURL, err)
	}
	cfg := sheetsio.Config{Endpoint: env.Endpoint, CredentialsFile: env.Credentials}
	if cfg.Endpoint != "" {
		cfg.CredentialsFile = ""
	}
	if d := env.RateLimitInterval; d > 0 {
		cfg.Pacing.ReadInterval, cfg.Pacing.WriteInterval = d, d
	}
	prov, err := sheetsio.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncStartup, err)
	}
	// The cadences stay 0: Open resolves them from the same lookup.
	return &SyncOptions{SpreadsheetID: id, Provider: prov, LookupEnv: lookup}, nil
}

// Environment variables of replicated mode (README "Replicated mode").
const (
	// EnvReplication = "jetstream" turns replicated mode on, with
	// HIKOUTEI_NATS_URL naming the cluster.
	EnvReplication = config.EnvReplication
	// EnvReplicationStore names the replicated store (shared by the
	// primary and its standbys).
	EnvReplicationStore = config.EnvReplicationStore
	// EnvReplicationReplicas is 3 (default) or 5.
	EnvReplicationReplicas = config.EnvReplicationReplicas
)

// ReplicationFromEnv builds ReplicationOptions from the environment:
// with HIKOUTEI_REPLICATION=jetstream it returns options for a primary
// (set Standby for a standby) on the cluster HIKOUTEI_NATS_URL names,
// with HIKOUTEI_REPLICATION_STORE and HIKOUTEI_REPLICATION_REPLICAS;
// with HIKOUTEI_REPLICATION unset it returns nil (one host). lookup is
// the process environment when nil. Errors: *EnvError wrapping
// invalid_replication or invalid_nats_url, naming the variable.
func ReplicationFromEnv(lookup func(string) (string, bool)) (*ReplicationOptions, error) {
	r, err := config.LoadReplication(lookup)
	if err != nil || !r.On {
		return nil, err
	}
	return &ReplicationOptions{URL: r.URL, Store: r.Store, Replicas: r.Replicas}, nil
}
