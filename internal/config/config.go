// Package config is the one place the environment is read: every variable
// Hikoutei knows, parsed strictly. Values are plain (strings and
// durations); the packages that use them build their own options.
// docs/configuration.md documents the same list.
package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Environment variables of the product.
const (
	// EnvSpreadsheetURL is the spreadsheet to sync to (a Google Sheets URL
	// or a bare id). Unset: local-only, no network.
	EnvSpreadsheetURL = "HIKOUTEI_SYNC_SPREADSHEET_URL"
	// EnvCredentials is Google's standard service-account key file variable.
	EnvCredentials = "GOOGLE_APPLICATION_CREDENTIALS"
	// EnvCredentialsPool lists more service-account key files, separated
	// by the OS's path list separator (":" on Unix): a pool of Google
	// users, each with its own per-user quota, besides
	// GOOGLE_APPLICATION_CREDENTIALS (account 0).
	EnvCredentialsPool = "HIKOUTEI_SHEETS_CREDENTIALS_POOL"
	// EnvSheetsEndpoint points the provider at an emulator (e.g.
	// `hikoutei fake-sheets`) instead of Google; no credentials are needed.
	EnvSheetsEndpoint = "HIKOUTEI_SHEETS_ENDPOINT"
	// EnvPollingInterval is the Input poller's cadence, in milliseconds.
	EnvPollingInterval = "HIKOUTEI_SYNC_POLLING_INTERVAL_MS"
	// EnvFullScanInterval is the safety full scan's cadence, in milliseconds.
	EnvFullScanInterval = "HIKOUTEI_SYNC_FULL_SCAN_INTERVAL_MS"
	// EnvReconcileInterval is the cadence of reconciliation and
	// anti-entropy (milliseconds, plain positive integer).
	EnvReconcileInterval = "HIKOUTEI_SYNC_RECONCILE_INTERVAL_MS"
	// EnvRateLimitInterval paces Sheets requests (reads and writes), in
	// milliseconds between requests.
	EnvRateLimitInterval = "HIKOUTEI_SYNC_RATE_LIMIT_INTERVAL_MS"
	// EnvDivergedBound is how long, in seconds, a tab may stay diverged
	// (rows differing from canonical state) before /healthz fails
	// (default twice the reconciliation interval).
	EnvDivergedBound = "HIKOUTEI_SYNC_DIVERGED_BOUND_SECONDS"
	// EnvNATSURL names an existing NATS server or cluster to use instead of
	// the embedded one.
	EnvNATSURL = "HIKOUTEI_NATS_URL"
	// EnvReplication turns on replicated mode: "jetstream" (the only
	// mode), with HIKOUTEI_NATS_URL naming the cluster. Unset or empty:
	// one host.
	EnvReplication = "HIKOUTEI_REPLICATION"
	// EnvReplicationStore names the replicated store, shared by the
	// primary and its standbys (default: the store directory's base
	// name, sanitised).
	EnvReplicationStore = "HIKOUTEI_REPLICATION_STORE"
	// EnvReplicationReplicas is the replica count of the stream and the
	// lease bucket: 3 (default) or 5.
	EnvReplicationReplicas = "HIKOUTEI_REPLICATION_REPLICAS"
	// EnvHTTPToken is the bearer token `serve --http` requires on a
	// non-loopback address (at least 16 characters; compared in constant
	// time). Set, it is required on a loopback address too.
	EnvHTTPToken = "HIKOUTEI_HTTP_TOKEN"
	// EnvSegmentsURL is where sealed segments live, for the commands that
	// take --segments (its default): file:///folder, or an object
	// store's URL (s3://bucket/prefix, mem:// …). Unset: DIR/segments.
	EnvSegmentsURL = "HIKOUTEI_SEGMENTS_URL"
)

// ReplicationJetStream is HIKOUTEI_REPLICATION's one mode.
const ReplicationJetStream = "jetstream"

// Environment variables of the test and crash tooling.
const (
	// EnvFailpoints arms failpoints ("name=action,…"; tests and `make crash`).
	EnvFailpoints = "HIKOUTEI_FAILPOINTS"
	// EnvCrashWorker marks a process as a crash campaign's worker.
	EnvCrashWorker = "HIKOUTEI_CRASH_WORKER"
	// EnvStorageRun carries one storage-fault campaign run to its child.
	EnvStorageRun = "HIKOUTEI_STORAGEFAULT_RUN"
	// EnvStorageMedium tells a storage-fault child how it gets a small
	// filesystem (tmpfs or rlimit_fsize).
	EnvStorageMedium = "HIKOUTEI_STORAGEFAULT_MEDIUM"
	// EnvKeepScaleDir keeps the scale test's store in that directory.
	EnvKeepScaleDir = "HIKOUTEI_KEEP_SCALE_DIR"
	// EnvBenchData = "cities" makes the rebuild benchmarks use the 171,075 cities.
	EnvBenchData = "HIKOUTEI_BENCH_DATA"
	// EnvBenchInboundRows is the row count of BenchmarkPollInputTab.
	EnvBenchInboundRows = "HIKOUTEI_BENCH_INBOUND_ROWS"
	// EnvBenchBackfillRows is the row count of the serve-configuration
	// backfill pair (bench/: BenchmarkBackfillCitiesServe); unset = every city.
	EnvBenchBackfillRows = "HIKOUTEI_BENCH_BACKFILL_ROWS"
	// EnvBenchPeakProfile names a file where that benchmark writes a heap
	// profile each time a collection finds a new maximum of live heap.
	EnvBenchPeakProfile = "HIKOUTEI_BENCH_PEAK_PROFILE"
	// EnvBenchRSSTrace names a file where the backfill benchmarks (both
	// sides) write what their resident memory is made of every 100 ms.
	EnvBenchRSSTrace = "HIKOUTEI_BENCH_RSS_TRACE"
	// EnvBenchIdleProfile names a file where the idle benchmark
	// (BenchmarkIdleMinute) writes a CPU profile of its measured minutes.
	EnvBenchIdleProfile = "HIKOUTEI_BENCH_IDLE_PROFILE"
	// EnvBenchSyncProfile names a file where the row-4 benchmarks
	// (BenchmarkSafePath10k, BenchmarkSafePath10kSyncOnly) write a CPU
	// profile of their timed part.
	EnvBenchSyncProfile = "HIKOUTEI_BENCH_SYNC_PROFILE"
	// EnvBenchEmulator, EnvBenchSheet and EnvBenchOut point the sync
	// benchmarks at an emulator of another process, a spreadsheet id there,
	// and a directory for convergence traces (make bench sets them).
	EnvBenchEmulator = "HIKOUTEI_BENCH_EMULATOR"
	EnvBenchSheet    = "HIKOUTEI_BENCH_SHEET"
	EnvBenchOut      = "HIKOUTEI_BENCH_OUT"
	// EnvBenchLogs is a directory where the long-history benchmarks keep
	// the logs they generate (BenchmarkOpenHistory: 10^5 to 10^7 events),
	// so a second run reuses them ("" = a temporary directory each run).
	EnvBenchLogs = "HIKOUTEI_BENCH_LOGS"
	// EnvBenchFreshRows and EnvBenchFreshSeconds size the freshness
	// benchmarks (bench/freshness_test.go): rows per entity (default
	// 1,000) and the measured window in seconds (default 60).
	EnvBenchFreshRows    = "HIKOUTEI_BENCH_FRESH_ROWS"
	EnvBenchFreshSeconds = "HIKOUTEI_BENCH_FRESH_SECONDS"
)

// Defaults of the cadences (HIKOUTEI_SYNC_POLLING_INTERVAL_MS and
// HIKOUTEI_SYNC_FULL_SCAN_INTERVAL_MS default to 60,000; docs/configuration.md).
const (
	DefaultPollingInterval  = 60 * time.Second
	DefaultFullScanInterval = 60 * time.Second
	// DefaultReconcileInterval is the anti-entropy cadence: the sheet
	// returns to canonical state within two of these after damage stops.
	DefaultReconcileInterval = 30 * time.Second
)

// Lookup reads one variable (os.LookupEnv in production).
type Lookup func(string) (string, bool)

// OS is the process environment.
var OS Lookup = os.LookupEnv

// Sync is the sync configuration found in the environment.
type Sync struct {
	SpreadsheetURL string // "" = local-only
	Credentials    string
	// CredentialsPool are the key files of the pool's other accounts
	// (empty entries dropped).
	CredentialsPool []string
	Endpoint        string
	// PollingInterval, FullScanInterval and RateLimitInterval are 0 when
	// their variable is unset or empty.
	PollingInterval, FullScanInterval, RateLimitInterval, ReconcileInterval time.Duration
	// DivergedBound is 0 when its variable is unset or empty.
	DivergedBound time.Duration
}

// LoadSync reads the sync variables. Errors: ErrInvalidInterval naming the
// variable (the store must not start half-configured).
func LoadSync(lookup Lookup) (Sync, error) {
	if lookup == nil {
		lookup = OS
	}
	s := Sync{SpreadsheetURL: get(lookup, EnvSpreadsheetURL), Credentials: get(lookup, EnvCredentials),
		Endpoint: get(lookup, EnvSheetsEndpoint), CredentialsPool: pathList(get(lookup, EnvCredentialsPool))}
	if err := checkEndpoint(s.Endpoint); err != nil {
		return s, err
	}
	for _, c := range []struct {
		env string
		out *time.Duration
	}{{EnvPollingInterval, &s.PollingInterval}, {EnvFullScanInterval, &s.FullScanInterval}, {EnvRateLimitInterval, &s.RateLimitInterval},
		{EnvReconcileInterval, &s.ReconcileInterval}} {
		d, err := Interval(lookup, c.env)
		if err != nil {
			return s, err
		}
		*c.out = d
	}
	var err error
	s.DivergedBound, err = Seconds(lookup, EnvDivergedBound)
	return s, err
}

// pathList splits a path list (filepath.SplitList), dropping empty
// entries and surrounding spaces.
func pathList(v string) []string {
	var out []string
	for _, p := range filepath.SplitList(v) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// NATSURL is the NATS server named in the environment ("" = embedded),
// unchecked: LoadNATSURL (or Check) validates it first.
func NATSURL(lookup Lookup) string {
	if lookup == nil {
		lookup = OS
	}
	return get(lookup, EnvNATSURL)
}

// LoadNATSURL reads HIKOUTEI_NATS_URL ("" = unset: the embedded server).
// Errors: *EnvError wrapping ErrInvalidNATSURL (see ParseNATSURL).
func LoadNATSURL(lookup Lookup) (string, error) {
	v := NATSURL(lookup)
	if v == "" {
		return "", nil
	}
	if err := ParseNATSURL(v); err != nil {
		return "", &EnvError{Var: EnvNATSURL, Err: err}
	}
	return v, nil
}

// Check parses every product variable of the process (sync, endpoint,
// cadences, NATS, replication, segments) strictly, as a command does before it touches a store.
// Errors: every problem found, joined (ErrInvalidInterval,
// ErrInvalidEndpoint, ErrInvalidNATSURL, ErrInvalidReplication,
// ErrInvalidSegmentsURL), each
// naming its variable.
func Check(lookup Lookup) error {
	_, serr := LoadSync(lookup)
	_, nerr := LoadNATSURL(lookup)
	_, rerr := LoadReplication(lookup)
	_, gerr := LoadSegmentsURL(lookup)
	return errors.Join(serr, nerr, rerr, gerr)
}

// Failpoints is the failpoint specification of the process ("" = none).
func Failpoints() string { return FailpointSpec(OS) }

// FailpointSpec is the failpoint specification lookup holds ("" = none);
// package failpoint parses it.
func FailpointSpec(lookup Lookup) string {
	if lookup == nil {
		lookup = OS
	}
	return get(lookup, EnvFailpoints)
}

// CrashWorker is the crash campaign's workload for this process ("" = not
// a campaign child).
func CrashWorker() string { return get(OS, EnvCrashWorker) }

// StorageRun is the storage-fault campaign run for this process ("" = not
// a campaign child).
func StorageRun() string { return get(OS, EnvStorageRun) }

// StorageMedium is how a storage-fault child gets a small filesystem.
func StorageMedium() string { return get(OS, EnvStorageMedium) }

func get(lookup Lookup, name string) string {
	if v, ok := lookup(name); ok {
		return v
	}
	return ""
}

// checkEndpoint accepts "" or an absolute http(s) URL with a host (see
// parseURL), a path but no user, query or fragment.
func checkEndpoint(v string) error {
	if v == "" {
		return nil
	}
	u, problem := parseURL(v, "http", "https")
	switch {
	case problem != "":
	case u.User != nil:
		problem = "must not carry a user or password"
	case u.RawQuery != "" || u.Fragment != "":
		problem = "must not have a query or fragment"
	}
	if problem != "" {
		return &EnvError{Var: EnvSheetsEndpoint, Err: fmt.Errorf("%w: %s", ErrInvalidEndpoint, problem)}
	}
	return nil
}

// Interval reads the millisecond interval variable name: 0 when unset or
// empty. Errors: ErrInvalidInterval naming it.
func Interval(lookup Lookup, name string) (time.Duration, error) {
	return durationVar(lookup, name, time.Millisecond)
}

// Seconds reads the variable name, a duration in whole seconds with the
// interval variables' strict syntax (see ParseIntervalMS): 0 when unset or
// empty. Errors: ErrInvalidInterval naming it.
func Seconds(lookup Lookup, name string) (time.Duration, error) {
	return durationVar(lookup, name, time.Second)
}

// durationVar reads variable name as a count of unit (strict syntax,
// clamped to what a time.Duration holds).
func durationVar(lookup Lookup, name string, unit time.Duration) (time.Duration, error) {
	if lookup == nil {
		lookup = OS
	}
	v, ok := lookup(name)
	if !ok || v == "" {
		return 0, nil
	}
	n, err := ParseIntervalMS(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return time.Duration(min(n, math.MaxInt64/int64(unit))) * unit, nil
}

// errNotInterval is ParseIntervalMS's error.
var errNotInterval = fmt.Errorf("%w: not a plain positive decimal integer (digits only, no sign, no leading zero, at most 2^53-1)", ErrInvalidInterval)

// maxIntervalMS is the longest interval a time.Duration holds (≈ 292
// years); larger safe integers are accepted and clamped to it.
const maxIntervalMS = math.MaxInt64 / int64(time.Millisecond)

// ParseIntervalMS parses an interval in milliseconds: ASCII digits only, no
// sign, no leading zero, no white space, value in [1, 2^53-1]. Errors:
// ErrInvalidInterval (the message never repeats the value).
func ParseIntervalMS(v string) (int64, error) {
	if v == "" || len(v) > 16 || v[0] == '0' {
		return 0, errNotInterval
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errNotInterval
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 || n > 1<<53-1 {
		return 0, errNotInterval
	}
	return n, nil
}
