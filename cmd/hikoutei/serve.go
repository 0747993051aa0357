package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/gsync"
	"github.com/hikoutei/hikoutei-go/internal/config"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/natsbus"
	"github.com/hikoutei/hikoutei-go/internal/wakehook"
	"github.com/hikoutei/hikoutei-go/natsserver"
	"github.com/hikoutei/hikoutei-go/observe"
	"github.com/hikoutei/hikoutei-go/sheetsio"
)

type serveFlags struct {
	dir, spreadsheet, credentials, endpoint string
	pool                                    []string // the --credentials after the first: a pool of service accounts
	httpAddr, natsListen, natsURL, natsNkey string
	natsListenNkeys                         []string
	routes                                  []string // --route ENTITY=SPREADSHEET
	natsListenNoAuth, natsMirror            bool
	acceptLogGap, standby                   bool
	segments                                string
	wakeMinInterval                         time.Duration
	retention                               hikoutei.Retention
	snapshotEvery                           uint64
}

func newServeCmd() *cobra.Command {
	var f serveFlags
	var keys []string // --credentials, repeated: the default account, then the pool
	cmd := &cobra.Command{
		Use:   "serve --dir DIR [--spreadsheet URL] [--credentials FILE... | --sheets-endpoint URL] [--http ADDR]",
		Short: "Run the sync service for a store until SIGINT/SIGTERM",
		Long: `serve opens the store (entity shapes from its log), takes the writer lease and
runs the sync workers: the outbox dispatcher, probes, reconciliation and the
Input pollers, woken over NATS (embedded by default) with timers as the
fallback. The spreadsheet comes from --spreadsheet or HIKOUTEI_SYNC_SPREADSHEET_URL;
credentials from --credentials or GOOGLE_APPLICATION_CREDENTIALS, or use
--sheets-endpoint / HIKOUTEI_SHEETS_ENDPOINT for an emulator. --credentials
given again adds a service account to a pool (or HIKOUTEI_SHEETS_CREDENTIALS_POOL):
each brings its own per-user quota (docs/google-sheets.md "A pool of service
accounts"). Logs are JSON on
stderr and never carry credentials, spreadsheet ids or cell values.
--http ADDR serves /metrics (Prometheus), /healthz (local vs sync health)
and, at /, a read-only status page (HTML: health, chain head, sync health
by tab, open conflicts, quarantine, outbox); and POST /wake, the wake hook
an Apps Script onEdit trigger calls so a person's edit is polled at once
(docs/wake-hook.md): signed with the secret in DIR/wake.key (made 0600 when
missing), never with the bearer token, at most one poll per
--wake-min-interval.
--nats-listen ADDR lets NATS clients connect to the embedded server; they
authenticate with the nkey seed generated in DIR/nats-client.nk (mode 0600),
or with one of the --nats-listen-nkey public keys; --nats-listen-no-auth is
refused on anything but a loopback address. --nats-mirror publishes every
committed event, signed and without the fencing token, for audit --nats.
SIGINT/SIGTERM stop the workers, release the lease and remove lease.toml.

Replicated mode (docs/replication.md): with HIKOUTEI_REPLICATION=jetstream
and HIKOUTEI_NATS_URL naming a NATS cluster, every commit is stored in the
store's R3 JetStream stream before it is acknowledged and the writer lease
lives in the cluster. --standby runs a warm standby: it follows the stream
into DIR (created when missing or empty), serves reads and /healthz
(local "standby: ...", HTTP 200), and becomes the primary, starting the
workers, once the primary's lease lapses. A primary that another took over
logs "replication: fenced", answers /healthz 503 (replication_fenced) and
exits 4; with --standby it follows the stream as a standby again instead.

Retention (docs/operations.md "Automatic retention"): --retain-max-age,
--retain-records and --retain-below-snapshot seal the log's older records into
segment files in the background, as hikoutei seal does, once a batch of at
least --retain-min-batch records is due; a record is sealed once every rule
given lets it go. Off unless one is given. A failed seal shows in /healthz
(retention_failing) and /metrics (hikoutei_seals_total{result="failed"});
a replicated store does not seal (retention "not_running").`,
		Args: argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(keys) > 0 {
				f.credentials, f.pool = keys[0], keys[1:]
			}
			if err := f.validate(); err != nil {
				return err
			}
			ctx, stop := interruptible(context.Background())
			defer stop()
			return serve(ctx, cmd, f, nil)
		},
	}
	addDirFlag(cmd, &f.dir)
	cmd.Flags().StringVar(&f.spreadsheet, "spreadsheet", "", "spreadsheet URL or id (default $HIKOUTEI_SYNC_SPREADSHEET_URL)")
	cmd.Flags().StringArrayVar(&f.routes, "route", nil,
		"ENTITY=SPREADSHEET: sync that entity's tabs to another spreadsheet (URL or id; repeatable; docs/sync.md \"More than one spreadsheet\")")
	cmd.Flags().StringArrayVar(&keys, "credentials", nil,
		"service-account JSON key (default $GOOGLE_APPLICATION_CREDENTIALS); repeat to add accounts to a pool (default $"+
			hikoutei.EnvCredentialsPool+")")
	cmd.Flags().StringVar(&f.endpoint, "sheets-endpoint", "", "Sheets API endpoint of an emulator (default $HIKOUTEI_SHEETS_ENDPOINT)")
	cmd.Flags().StringVar(&f.httpAddr, "http", "", "serve /metrics, /healthz and the status page (/) on ADDR (e.g. 127.0.0.1:9090)")
	cmd.Flags().StringVar(&f.natsListen, "nats-listen", "", "let the embedded NATS server accept authenticated clients on ADDR (e.g. 127.0.0.1:4222)")
	cmd.Flags().StringArrayVar(&f.natsListenNkeys, "nats-listen-nkey", nil, "public user nkey (U…) allowed to connect to --nats-listen instead of the generated DIR/nats-client.nk (repeatable)")
	cmd.Flags().BoolVar(&f.natsListenNoAuth, "nats-listen-no-auth", false, "accept --nats-listen clients without authentication (loopback addresses only)")
	cmd.Flags().StringVar(&f.natsURL, "nats", "", "use an existing NATS server (default $HIKOUTEI_NATS_URL; else embedded)")
	cmd.Flags().StringVar(&f.natsNkey, "nats-nkey", "", "nkey user seed file to authenticate to --nats")
	cmd.Flags().BoolVar(&f.acceptLogGap, "accept-log-gap", false, "open a store whose log lost records its read model still has, accepting the loss (recorded in the log); see salvage --head first")
	addSegmentsFlag(cmd, &f.segments)
	cmd.Flags().BoolVar(&f.standby, "standby", false, "run as a warm standby of a replicated store (needs HIKOUTEI_REPLICATION=jetstream)")
	cmd.Flags().DurationVar(&f.wakeMinInterval, "wake-min-interval", wakehook.DefaultMinInterval,
		"least time between two polls that POST /wake starts (at least 1s)")
	addRetentionFlags(cmd, &f)
	cmd.Flags().BoolVar(&f.natsMirror, "nats-mirror", false, "mirror committed events to the JetStream stream HIKOUTEI_<STORE> (signed, no fencing token)")
	return cmd
}

// env overlays the flags on the environment for gsync.SyncFromEnv.
func (f serveFlags) env(k string) (string, bool) {
	over := map[string]string{hikoutei.EnvSpreadsheetURL: f.spreadsheet, hikoutei.EnvCredentials: f.credentials,
		hikoutei.EnvSheetsEndpoint: f.endpoint, hikoutei.EnvCredentialsPool: strings.Join(f.pool, string(os.PathListSeparator))}
	if f.credentials != "" && k == hikoutei.EnvCredentialsPool { // the flags name the whole pool
		return over[k], true
	}
	if v := over[k]; v != "" {
		return v, true
	}
	return config.OS(k)
}

// serve runs until ctx ends; ready, if set, receives the bound --http
// address once the service runs. In replicated mode a fenced primary
// returns its fencing error (exit 4), or, with --standby, follows the
// stream as a standby again.
func serve(ctx context.Context, cmd *cobra.Command, f serveFlags, ready func(httpAddr string)) error {
	logger := slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), nil))
	var access httpAccess
	if f.httpAddr != "" {
		var err error
		if access, err = checkHTTPAccess(f.httpAddr, config.OS); err != nil {
			return err
		}
	}
	if !f.standby { // a standby creates its directory
		if err := engine.IsStore(f.dir); err != nil {
			return serveNextStep(err, f.dir)
		}
	}
	syncOpts, err := syncFromFlags(ctx, f)
	if err != nil {
		return err
	}
	repl, err := f.replication()
	if err != nil {
		return err
	}
	// The --http port is bound before the lease is taken: a port in use
	// fails the command without touching the store.
	var ln net.Listener
	if f.httpAddr != "" {
		if ln, err = net.Listen("tcp", access.addr); err != nil {
			return fmt.Errorf("--http: %w", err)
		}
	}
	segURL, err := segmentsURL(f.segments)
	if err != nil {
		return err
	}
	metrics := observe.New()
	open := func(standby bool) (*hikoutei.Store, error) {
		opts := hikoutei.Options{Operation: "serve", Logger: logger, Sync: syncOpts, AcceptLogGap: f.acceptLogGap, Observer: metrics, Segments: segURL,
			NATSServer: natsserver.Embedded(),
			NATS: &hikoutei.NATSOptions{Listen: f.natsListen, URL: f.natsURL, NkeyFile: f.natsNkey, ListenNkeys: f.natsListenNkeys,
				ListenNoAuth: f.natsListenNoAuth, Mirror: f.natsMirror},
			Retention: f.retention, SnapshotEvery: f.snapshotEvery}
		if repl != nil {
			r := *repl
			r.Standby = standby
			opts.Replication = &r
		}
		return hikoutei.OpenDeclared(ctx, f.dir, opts)
	}
	s, err := open(f.standby)
	if err != nil {
		if ln != nil {
			ln.Close()
		}
		return serveNextStep(err, f.dir)
	}
	var cur atomic.Pointer[hikoutei.Store]
	cur.Store(s)
	metrics.Watch(current(cur.Load))
	logServing(logger, f.dir, s)
	go newTabWatch(logger).run(ctx, current(cur.Load))
	addr := ""
	if ln != nil {
		wake, err := newWakeHook(f.dir, current(cur.Load), f.wakeMinInterval, metrics, logger)
		if err != nil {
			ln.Close()
			return errors.Join(err, s.Close())
		}
		addr = serveHTTP(ctx, current(cur.Load), ln, access, metrics, wake, logger)
	}
	if ready != nil {
		ready(addr)
	}
	for {
		eng := engine.Of(s)
		select {
		case <-ctx.Done():
			logger.Info("stopping: releasing the lease")
			replaced := logFileReplaced(s)
			err := s.Close()
			if replaced != nil {
				logger.Error("stopped with log.db replaced or removed under the store: what only the open log held is gone from the directory "+
					"unless it was backed up while serve ran (`hikoutei backup --dir DIR --out FILE`); see docs/production.md, "+
					"\"log.db removed or replaced under a running store\"", "dir", f.dir, "code", hikoutei.ErrLogFileReplaced.Error(), "err", replaced)
				return errors.Join(fmt.Errorf("%w: %w", errServeLogReplaced, replaced), err)
			}
			return err
		case <-eng.Ended():
		}
		ended := eng.EndErr()
		s.Close() // a fenced primary has nothing left to release
		if !f.standby || !errors.Is(ended, hikoutei.ErrReplicationFenced) {
			return ended
		}
		logger.Warn("replication: fenced; following the replicated store as a standby again")
		if s, err = open(true); err != nil {
			return err
		}
		cur.Store(s)
		logServing(logger, f.dir, s)
	}
}

// serveNextStep adds to not_a_store what to run: serve opens a store, it
// never creates one.
func serveNextStep(err error, dir string) error {
	if !errors.Is(err, hikoutei.ErrNotAStore) || isFile(dir) { // a file: the error names the folder to pass
		return err
	}
	return fmt.Errorf("%w; serve opens an existing store and never creates one: create it by opening it "+
		"once from your program (hikoutei.Open), or restore a backup into it (hikoutei restore --from FILE --to %s); "+
		"to try the product, run hikoutei demo --keep-open", err, dir)
}

// isFile reports whether path exists and is not a directory.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir()
}

// syncFromFlags is the sync configuration of the flags over the
// environment. Every error is a configuration error (exit 2) naming the
// flag and the variable: restarting serve does not help.
func syncFromFlags(ctx context.Context, f serveFlags) (*hikoutei.SyncOptions, error) {
	opts, err := gsync.SyncFromEnv(ctx, f.env)
	switch {
	case errors.Is(err, sheetsio.ErrCredentialsMissing) && !poolAccountErr(err):
		return nil, usageError{fmt.Errorf("%w: give --credentials FILE or set %s (a service-account JSON key), "+
			"or --sheets-endpoint / %s for an emulator", err, hikoutei.EnvCredentials, hikoutei.EnvSheetsEndpoint)}
	case errors.Is(err, sheetsio.ErrCredentialsNotJSON), errors.Is(err, sheetsio.ErrCredentialsIncomplete),
		errors.Is(err, sheetsio.ErrCredentialsRejected), errors.Is(err, sheetsio.ErrCredentialsMissing):
		source := "environment: " + hikoutei.EnvCredentials
		if v, _ := config.OS(hikoutei.EnvCredentialsPool); v != "" {
			source += " or " + hikoutei.EnvCredentialsPool
		}
		if f.credentials != "" {
			source = `flag "--credentials"`
		}
		return nil, usageError{fmt.Errorf("%s: %w", source, err)}
	case err != nil:
		return nil, usageError{fmt.Errorf("%w (flags --spreadsheet, --credentials, --sheets-endpoint; variables %s, %s, %s and the HIKOUTEI_SYNC_* intervals)",
			err, hikoutei.EnvSpreadsheetURL, hikoutei.EnvCredentials, hikoutei.EnvSheetsEndpoint)}
	case opts == nil:
		return nil, usageError{errors.New("no spreadsheet: give --spreadsheet or set " + hikoutei.EnvSpreadsheetURL)}
	}
	if opts.Routes, err = routesOf(f.routes); err != nil {
		return nil, usageError{err}
	}
	return opts, nil
}

// poolAccountErr reports whether err is about an account of the pool
// (its message names the index), not the first key.
func poolAccountErr(err error) bool {
	var se *sheetsio.Error
	return errors.As(err, &se) && strings.HasPrefix(se.Msg, "pool account ")
}

// routesOf parses the --route flags (ENTITY=SPREADSHEET, the spreadsheet
// as a URL or an id) into routes, one per spreadsheet in the order first
// named. Open checks the rest (an entity routed twice, an undeclared one).
func routesOf(flags []string) ([]hikoutei.SyncRoute, error) {
	var out []hikoutei.SyncRoute
	at := map[string]int{}
	for _, f := range flags {
		entity, sheet, ok := strings.Cut(f, "=")
		if !ok || entity == "" || sheet == "" {
			return nil, errors.New("--route takes ENTITY=SPREADSHEET (a spreadsheet URL or id)")
		}
		id, err := sheetsio.ParseSpreadsheetURL(sheet)
		if err != nil {
			return nil, fmt.Errorf("--route %s: %w", entity, err)
		}
		i, seen := at[id]
		if !seen {
			i, at[id] = len(out), len(out)
			out = append(out, hikoutei.SyncRoute{SpreadsheetID: id})
		}
		out[i].Entities = append(out[i].Entities, entity)
	}
	return out, nil
}

// replication is replicated mode from the environment (nil: one host);
// --nats and --nats-nkey name the cluster when given.
func (f serveFlags) replication() (*hikoutei.ReplicationOptions, error) {
	repl, err := hikoutei.ReplicationFromEnv(config.OS)
	if err != nil {
		return nil, usageError{err}
	}
	if repl == nil {
		if f.standby {
			return nil, usageError{errors.New("--standby needs replicated mode: set " + hikoutei.EnvReplication + "=jetstream and " + hikoutei.EnvNATSURL)}
		}
		return nil, nil
	}
	if f.natsURL != "" {
		repl.URL = f.natsURL
	}
	repl.NkeyFile = f.natsNkey
	return repl, nil
}

// logServing says the store serves, and in which replicated role.
func logServing(logger *slog.Logger, dir string, s *hikoutei.Store) {
	eng := engine.Of(s)
	attrs := []any{"dir", dir, "epoch", eng.Lease().Epoch, "segments", s.SegmentsLocation().String()}
	if r := s.Health().Replication; r != nil {
		attrs = append(attrs, "role", string(r.Role), "replicated_store", r.Store)
	}
	logger.Info("serving", attrs...)
	logNATSListener(logger, dir, eng.Bus())
}

// serveHTTP serves /metrics (the store's series, package observe, plus
// the Go runtime's and the process's), /healthz and the status page (/)
// of the store cur
// returns (it changes when a fenced primary becomes a standby again) on
// ln, behind the bearer token when access has one; and POST /wake, which
// authenticates its own requests (newWakeHook).
func serveHTTP(ctx context.Context, cur current, ln net.Listener, access httpAccess, m *observe.Metrics, wake http.Handler,
	logger *slog.Logger) string {
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", statusPageHandler(cur))
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		r := observe.Report(cur.Health())
		if bus := engine.Of(cur()).Bus(); bus != nil && bus.ListenMode() != natsbus.ListenOff {
			r.NATSListen = string(bus.ListenMode())
		}
		observe.WriteHealth(w, r)
	})
	// A failing Accept (too many open files) is retried with a backoff by
	// net/http itself and logged; Serve ends only when the server is shut
	// down.
	root := http.NewServeMux()
	root.Handle("POST /wake", wake)
	root.Handle("/", access.guard(mux))
	srv := &http.Server{Handler: root, ReadHeaderTimeout: 5 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("http: stopped serving", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		srv.Shutdown(context.Background())
	}()
	logger.Info("http", "addr", ln.Addr().String(), "auth", access.mode())
	return ln.Addr().String()
}

// current is the store serve runs now, as observe's Source.
type current func() *hikoutei.Store

func (c current) Health() hikoutei.Health { return c().Health() }

func (c current) Stats(ctx context.Context) (hikoutei.Stats, error) { return c().Stats(ctx) }

func (c current) Attention(ctx context.Context) (hikoutei.Attention, error) {
	return c().Attention(ctx)
}

func (c current) Conflicts(ctx context.Context, status hikoutei.ConflictStatus) ([]hikoutei.Conflict, error) {
	return c().Conflicts(ctx, status)
}

func (c current) ChainHead() (hikoutei.ChainPin, error) { return c().ChainHead() }

// logNATSListener says where the embedded server listens and how it is
// protected (the credentials file's path, never its content).
func logNATSListener(logger *slog.Logger, dir string, bus *natsbus.Bus) {
	if bus == nil || bus.ListenURL() == "" {
		return
	}
	attrs := []any{"listen", bus.ListenURL(), "auth", string(bus.ListenMode()), "poll_subject", bus.Subject(natsbus.SuffixWakePoll)}
	if bus.ClientKey() != "" {
		attrs = append(attrs, "credentials", filepath.Join(dir, engine.ClientSeedFile))
	}
	logger.Info("nats", attrs...)
}

// errServeLogReplaced makes serve exit 6: it stopped while the store's
// log.db was replaced or removed under it (log_file_replaced).
var errServeLogReplaced = errors.New("serve stopped with its log file replaced or removed")

// logFileReplaced is why s refuses commits when it is that its log.db
// was replaced or removed (Health checks the file now), else nil.
func logFileReplaced(s *hikoutei.Store) error {
	if local := s.Health().Local; errors.Is(local, hikoutei.ErrLogFileReplaced) {
		return local
	}
	return nil
}
