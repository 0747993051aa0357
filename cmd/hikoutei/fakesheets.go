package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// Defaults of the fake-sheets command.
const (
	defaultFakeSheetsAddr   = "127.0.0.1:8787"
	defaultSaveInterval     = 10 * time.Second
	defaultMaxRequestBytes  = emulator.GoogleMaxRequestBytes
	fakeSheetsShutdownGrace = 5 * time.Second
)

// fakeSheetsConfig is the parsed command line of fake-sheets.
type fakeSheetsConfig struct {
	addr            string
	autoCreate      bool
	statePath       string
	saveInterval    time.Duration
	googleLatency   bool
	googleQuota     bool
	maxRequestBytes int64
	deny            []string
	allowHosts      []string
}

func newFakeSheetsCmd() *cobra.Command {
	var cfg fakeSheetsConfig
	cmd := &cobra.Command{
		Use:   "fake-sheets [--addr HOST:PORT] [--auto-create] [--state FILE]",
		Short: "Serve a local Google Sheets API v4 emulator over HTTP (development and tests)",
		Long: `fake-sheets serves the in-process Google Sheets emulator (sheetsio/emulator)
over HTTP until SIGINT or SIGTERM, then shuts down gracefully.

On start it prints one line with the base URL to hand to the real client
(google.golang.org/api/sheets/v4 with option.WithEndpoint(URL) and
option.WithoutAuthentication(), or gsheets.Config{Endpoint: URL}) and the URL
of the read-only web view. GET / lists every spreadsheet; /view/{id} lists its
tabs; /view/{id}/{sheetId} shows a tab's cells as the UI displays them.

Spreadsheets are created with spreadsheets.create (POST /v4/spreadsheets);
with --auto-create any unknown spreadsheet id springs into existence on first
use as a fresh spreadsheet (tab "Sheet1", sheetId 0, 1000 x 26). Without it
unknown ids answer 404 NOT_FOUND like Google.

With --state FILE the spreadsheets are loaded from FILE at start (if it exists)
and saved to it atomically (0600 temp file, fsync, rename) every
--save-interval and at shutdown. A state file that cannot be read stops the
command before it serves anything, and is left untouched.

The emulator has no authentication: keep --addr on a loopback address.
It refuses what a web page could send it: a Host header that is not a
loopback address, localhost or the address it was reached on (DNS
rebinding; --allow-host NAME admits another name, e.g. a container's service
name), a foreign Origin (403 PERMISSION_DENIED), and a POST/PUT/PATCH/DELETE
whose Content-Type is not application/json (415).
--deny ID makes every request for that spreadsheet answer 403
PERMISSION_DENIED ("The caller does not have permission"), to try the
"share the spreadsheet with the service account" diagnostic.
--google-latency adds Google-like latency (150 ms per request + 20 µs per
written cell); --google-quota enforces Google's per-minute quotas (60 reads
and 60 writes per user, 300 each per project) with 429 RESOURCE_EXHAUSTED.

Exit 0 after a clean shutdown, 1 when the server or the state file failed,
2 on a usage error.`,
		Example: `  hikoutei fake-sheets --addr 127.0.0.1:8787 --auto-create --state ./fake-sheets.json`,
		Args:    argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.validate(); err != nil {
				return usageError{err}
			}
			if cfg.statePath != "" {
				if _, err := events.CheckOutside(cfg.statePath); err != nil {
					return err // the state file is output: never inside a store directory
				}
			}
			ctx, stop := interruptible(cmd.Context())
			defer stop()
			return serveFakeSheets(ctx, cfg, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.addr, "addr", defaultFakeSheetsAddr, "listen address HOST:PORT (port 0 picks a free port)")
	f.BoolVar(&cfg.autoCreate, "auto-create", false, "create unknown spreadsheet ids on first use instead of answering 404")
	f.StringVar(&cfg.statePath, "state", "", "load spreadsheets from FILE at start and save them to it periodically and at shutdown")
	f.DurationVar(&cfg.saveInterval, "save-interval", defaultSaveInterval, "how often to save --state while serving (0: only at shutdown)")
	f.BoolVar(&cfg.googleLatency, "google-latency", false, "add Google-like latency to every request")
	f.BoolVar(&cfg.googleQuota, "google-quota", false, "enforce Google's per-minute read and write quotas (429 RESOURCE_EXHAUSTED)")
	f.Int64Var(&cfg.maxRequestBytes, "max-request-bytes", defaultMaxRequestBytes, "reject larger request bodies with 400, as Google does over its 10 MiB limit (0: no limit)")
	f.StringArrayVar(&cfg.allowHosts, "allow-host", nil, "also accept requests whose Host header names NAME (e.g. a container's service name; repeatable)")
	f.StringArrayVar(&cfg.deny, "deny", nil, "answer 403 PERMISSION_DENIED for this spreadsheet id, as if it were not shared (repeatable)")
	return cmd
}

func (c fakeSheetsConfig) validate() error {
	if c.addr == "" {
		return errors.New(`flag "--addr" must not be empty`)
	}
	if _, _, err := net.SplitHostPort(c.addr); err != nil {
		return fmt.Errorf(`flag "--addr" must be HOST:PORT: %w`, err)
	}
	if c.saveInterval < 0 {
		return errors.New(`flag "--save-interval" must not be negative`)
	}
	if c.maxRequestBytes < 0 {
		return errors.New(`flag "--max-request-bytes" must not be negative`)
	}

	for _, h := range c.allowHosts {
		if h == "" || strings.ContainsAny(h, ":/[]@ \t\r\n") {
			return fmt.Errorf(`flag "--allow-host" must be a host name without port: %q`, h)
		}
	}
	return nil
}

func (c fakeSheetsConfig) emulatorOptions() emulator.Options {
	o := emulator.Options{AutoCreate: c.autoCreate, MaxRequestBytes: c.maxRequestBytes, AllowedHosts: c.allowHosts}
	if c.googleLatency {
		o.Latency = emulator.GoogleLatency()
	}
	if c.googleQuota {
		o.Quota = emulator.GoogleQuota()
	}
	return o
}

// serveFakeSheets runs the emulator until ctx is done. It prints the start
// line to out once the listener is bound; diagnostics go to errOut.
func serveFakeSheets(ctx context.Context, cfg fakeSheetsConfig, out, errOut io.Writer) error {
	emu := emulator.New(cfg.emulatorOptions())
	for _, id := range cfg.deny {
		emu.Deny(id)
	}
	var st *stateFile
	if cfg.statePath != "" {
		st = &stateFile{path: cfg.statePath, emu: emu}
		if err := st.load(); err != nil {
			return err
		}
		// Fail before serving when the state cannot be written.
		if err := st.save(); err != nil {
			return err
		}
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("fake-sheets: cannot listen: %w", err)
	}
	// Request contexts end when the grace period is over, so latency sleeps
	// and slow handlers stop promptly.
	baseCtx, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	srv := &http.Server{
		Handler:           emu.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	base := baseURL(ln.Addr())
	if !isLoopback(ln.Addr()) {
		fmt.Fprintln(errOut, "fake-sheets: warning: listening on a non-loopback address; the emulator has no authentication")
	}
	fmt.Fprintf(out, "fake-sheets: API endpoint %s (option.WithEndpoint) · web view %s\n", base, base)

	stopSaver := make(chan struct{})
	saverDone := make(chan struct{})
	go func() {
		defer close(saverDone)
		if st == nil || cfg.saveInterval == 0 {
			return
		}
		st.periodic(cfg.saveInterval, stopSaver, errOut)
	}()

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), fakeSheetsShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		cancelRequests()
		_ = srv.Close()
	}
	if serveErr == nil {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			serveErr = err
		}
	} else if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	close(stopSaver)
	<-saverDone
	if st != nil {
		if err := st.save(); err != nil {
			return err
		}
	}
	if serveErr != nil {
		return fmt.Errorf("fake-sheets: server failed: %w", serveErr)
	}
	fmt.Fprintln(out, "fake-sheets: stopped")
	return nil
}

// baseURL is the URL clients use for addr; an unspecified host (0.0.0.0,
// ::) is reachable as loopback.
func baseURL(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + "/"
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

func isLoopback(addr net.Addr) bool {
	if ta, ok := addr.(*net.TCPAddr); ok {
		return ta.IP.IsLoopback()
	}
	return false
}

// stateFile persists the emulator's spreadsheets to one JSON file.
type stateFile struct {
	path string
	emu  *emulator.Emulator

	mu   sync.Mutex
	last [sha256.Size]byte // hash of the last document written
	has  bool
}

// load reads the file if it exists. A missing file is an empty state.
func (s *stateFile) load() error {
	f, err := os.Open(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fake-sheets: cannot open state file: %w", err)
	}
	defer f.Close()
	if err := s.emu.Load(f); err != nil {
		return fmt.Errorf("fake-sheets: cannot load state file %s (left untouched): %w", s.path, err)
	}
	return nil
}

// save writes the state atomically: a 0600 temp file in the same
// directory, fsync, rename, fsync of the directory. An unchanged state is
// not rewritten.
func (s *stateFile) save() error {
	var buf bytes.Buffer
	if err := s.emu.Save(&buf); err != nil {
		return fmt.Errorf("fake-sheets: cannot encode state: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.has && sum == s.last {
		return nil
	}
	if err := writeFileAtomic(s.path, buf.Bytes()); err != nil {
		return fmt.Errorf("fake-sheets: cannot save state: %w", err)
	}
	s.last, s.has = sum, true
	return nil
}

// periodic saves every interval until stop is closed; failures are
// reported and retried at the next tick.
func (s *stateFile) periodic(interval time.Duration, stop <-chan struct{}, errOut io.Writer) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if err := s.save(); err != nil {
				fmt.Fprintf(errOut, "%v\n", err)
			}
		}
	}
}

func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
