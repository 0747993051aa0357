package hikoutei

import (
	"github.com/hikoutei/hikoutei-go/internal/config"
)

// Environment variables of sync (see docs/configuration.md).
const (
	// EnvSpreadsheetURL is the spreadsheet to sync to (a Google Sheets URL
	// or a bare id).
	EnvSpreadsheetURL = "HIKOUTEI_SYNC_SPREADSHEET_URL"
	// EnvCredentials is Google's standard service-account key file variable.
	EnvCredentials = "GOOGLE_APPLICATION_CREDENTIALS"
	// EnvCredentialsPool lists more service-account key files (separated
	// by ":" on Unix, the OS's path list separator): a pool of Google
	// users, each with its own per-user quota, besides
	// GOOGLE_APPLICATION_CREDENTIALS (see docs/google-sheets.md).
	EnvCredentialsPool = "HIKOUTEI_SHEETS_CREDENTIALS_POOL"
	// EnvSheetsEndpoint points the provider at an emulator (e.g.
	// `hikoutei fake-sheets`) instead of Google; no credentials are needed.
	EnvSheetsEndpoint = "HIKOUTEI_SHEETS_ENDPOINT"
	// EnvNATSURL names an existing NATS server or cluster.
	EnvNATSURL = "HIKOUTEI_NATS_URL"
)

// Environment variables of replicated mode (docs/replication.md).
const (
	// EnvReplication = "jetstream" turns replicated mode on, with
	// HIKOUTEI_NATS_URL naming the cluster.
	EnvReplication = "HIKOUTEI_REPLICATION"
	// EnvReplicationStore names the replicated store (shared by the
	// primary and its standbys).
	EnvReplicationStore = "HIKOUTEI_REPLICATION_STORE"
	// EnvReplicationReplicas is 3 (default) or 5.
	EnvReplicationReplicas = "HIKOUTEI_REPLICATION_REPLICAS"
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
