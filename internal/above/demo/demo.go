// Package demo runs the product end to end on real data: the OpenFlights
// airports committed to a fresh store, synced through the Sheets emulator
// (with Google's latency and quota model), edited by people through the
// emulator's person API, polled back, and verified against canonical state.
package demo

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/progress"
	"github.com/hikoutei/hikoutei-go/natsserver"
	"github.com/hikoutei/hikoutei-go/projector"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// SpreadsheetID is the emulated spreadsheet the demo syncs to.
const SpreadsheetID = "demo-airports"

// Config configures Run.
type Config struct {
	Dir      string    // store directory; "" = a fresh temporary one
	Data     string    // path of airports.json ("" = the copy built in)
	Rows     int       // airports to load (0 = all 7,184)
	Google   bool      // emulate Google's latency and quota model
	KeepOpen bool      // serve the emulator's web view until ctx ends
	Out      io.Writer // the report
	Progress io.Writer // progress bars (nil = none)
	Logger   *slog.Logger
	// Stall is how long a wait may observe no progress before the demo
	// fails (0 = DefaultStall); see waitFor.
	Stall time.Duration
	// MadeDir says the caller made Dir for this run (a fresh temporary
	// directory): the report then gives its size and how to remove it.
	MadeDir bool
}

// Summary is the demo's outcome; Line renders the closing summary line.
type Summary struct {
	Rows, SheetRows, Mismatches, Conflicts, Resolved int
	// QuarantinedActs counts the person acts whose outcome is
	// quarantined (the outcomes list); Quarantined counts the rows held
	// for review (active quarantine records, as `hikoutei status` counts
	// them): a pasted duplicate is two rows, the original and its copy.
	QuarantinedActs, Quarantined int
	// ResolvedInSheet counts the conflicts people resolved in Sync_Conflicts.
	ResolvedInSheet int
	// Erased counts the data subjects the demo erased (docs/erasure.md).
	Erased                  int
	Requests                int64
	Elapsed                 time.Duration
	Dir, ReadModel, ViewURL string
	// Outcomes are the person acts and the outcome each reached.
	Outcomes []Outcome
}

// Line is the single closing line the demo prints.
func (s Summary) Line() string {
	return fmt.Sprintf("summary: rows=%d sheet_rows=%d mismatches=%d conflicts=%d resolved=%d resolved_in_sheet=%d "+
		"quarantined_acts=%d quarantined_rows=%d erased=%d requests=%d",
		s.Rows, s.SheetRows, s.Mismatches, s.Conflicts, s.Resolved, s.ResolvedInSheet, s.QuarantinedActs, s.Quarantined, s.Erased, s.Requests)
}

// env is everything a running demo holds.
type env struct {
	cfg   Config
	emu   *emulator.Emulator
	url   string
	prov  *gsheets.Provider
	store *hikoutei.Store
	data  []Airport
}

// Run executes the demo and returns its summary. Errors: setup failures
// (data file, listener, store), ErrStalled, ErrUnexpectedOutcome; a
// summary with mismatches is not an error. On any failure (and on
// mismatches) it prints where the store is kept and the commands to
// inspect it.
func Run(ctx context.Context, cfg Config) (Summary, error) {
	start := time.Now()
	if cfg.Stall <= 0 {
		cfg.Stall = DefaultStall
	}
	if cfg.Rows > 0 && cfg.Rows < MinRows {
		return Summary{}, tooFew(cfg.Rows)
	}
	e, err := setup(ctx, cfg)
	if err != nil {
		return Summary{}, e.failed(err)
	}
	// The view's address comes first, so the sheet can be watched as it fills.
	fmt.Fprintf(cfg.Out, "spreadsheet web view: %s/ (open it to watch the sheet fill)\n", e.url)
	sum, err := e.run(ctx)
	e.close() // the store is closed before anyone is told to inspect it
	if err != nil {
		return sum, e.failed(err)
	}
	sum.Elapsed = time.Since(start)
	if sum.Mismatches > 0 {
		e.failed(fmt.Errorf("%w: %d rows differ from canonical state", ErrMismatches, sum.Mismatches))
	}
	e.report(sum) // the summary line stays the last line
	if cfg.KeepOpen {
		fmt.Fprintf(cfg.Out, "keeping the emulator open at %s — Ctrl-C to stop\n", sum.ViewURL)
		<-ctx.Done()
	}
	return sum, nil
}

// run commits, syncs, plays the people and verifies.
func (e *env) run(ctx context.Context) (Summary, error) {
	if len(e.data) < MinRows { // a --data file this small
		return Summary{}, tooFew(len(e.data))
	}
	if err := e.commitAll(ctx); err != nil {
		return Summary{}, err
	}
	if err := e.waitSynced(ctx); err != nil {
		return Summary{}, err
	}
	return e.actAndVerify(ctx)
}

// failed prints what failed, where the store is kept and the exact
// commands to inspect it, and returns err. The store is never deleted.
func (e *env) failed(err error) error {
	if e == nil || e.cfg.Dir == "" {
		return err
	}
	d := e.cfg.Dir
	fmt.Fprintf(e.cfg.Out, "\ndemo failed: %v\nthe store is kept at %s; inspect it (from the repository, `go run ./cmd/hikoutei` for `hikoutei`):\n", err, d)
	fmt.Fprintf(e.cfg.Out, "  hikoutei status --dir %s\n  hikoutei audit --dir %s\n  hikoutei conflicts list --dir %s --state all\n", d, d, d)
	fmt.Fprintf(e.cfg.Out, "  sqlite3 %s 'SELECT tab, anchor, reason FROM hk_quarantine WHERE active = 1'\n", filepath.Join(d, projector.FileName))
	e.removal()
	return err
}

// setup loads the data, makes the store directory, starts the emulator
// and opens the store; the env it returns (nil only before the
// directory exists) is what failed needs.
func setup(ctx context.Context, cfg Config) (*env, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	data, err := LoadAirports(cfg.Data)
	if err != nil {
		return nil, err
	}
	if cfg.Rows > 0 && cfg.Rows < len(data) {
		data = data[:cfg.Rows]
	}
	if cfg.Dir == "" {
		if cfg.Dir, err = os.MkdirTemp("", "hikoutei-demo-"); err != nil {
			return nil, err
		}
		cfg.MadeDir = true
	}
	e := &env{cfg: cfg, data: data}
	if err := e.startEmulator(); err != nil {
		return e, err
	}
	return e, e.openStore(ctx)
}

func (e *env) startEmulator() error {
	opts := emulator.Options{AutoCreate: true}
	if e.cfg.Google {
		opts = emulator.GoogleModel(opts)
	}
	e.emu = emulator.New(opts)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	e.url = "http://" + ln.Addr().String()
	go http.Serve(ln, e.emu.Handler())
	return nil
}

func (e *env) openStore(ctx context.Context) error {
	pc := gsheets.Config{Endpoint: e.url, Logger: e.cfg.Logger}
	if !e.cfg.Google {
		pc.Pacing = gsheets.Pacing{ReadInterval: -1, WriteInterval: -1}
	}
	prov, err := gsheets.New(ctx, pc)
	if err != nil {
		return err
	}
	e.prov = prov
	e.store, err = hikoutei.Open(ctx, e.cfg.Dir, hikoutei.Options{Operation: "demo", Logger: e.cfg.Logger, NATSServer: natsserver.Embedded(),
		Sync: &hikoutei.SyncOptions{SpreadsheetID: SpreadsheetID, Provider: prov, Interval: 500 * time.Millisecond,
			ProbeDelay: time.Second, ReconcileInterval: 5 * time.Second, PollingInterval: time.Second, FullScanInterval: 10 * time.Second}},
		hikoutei.Entity[Airport]("Airport"))
	return err
}

func (e *env) close() {
	if e.store != nil {
		e.store.Close()
		e.store = nil
	}
}

// bar shows progress on cfg.Progress: a bar with elapsed time and the
// time left on a terminal, plain lines elsewhere.
func (e *env) bar(max int, what string) *progress.Bar {
	return progress.New(e.cfg.Progress, int64(max), what)
}

// commitAll commits the airports in units of 500, with a progress bar.
func (e *env) commitAll(ctx context.Context) error {
	bar := e.bar(len(e.data), "commit")
	for i := 0; i < len(e.data); i += 500 {
		u := e.store.Begin()
		end := min(i+500, len(e.data))
		for j := i; j < end; j++ {
			if err := u.Persist(&e.data[j]); err != nil {
				bar.Abandon()
				return err
			}
		}
		if _, err := u.Commit(ctx); err != nil {
			bar.Abandon()
			return err
		}
		bar.Set(int64(end))
	}
	bar.Finish()
	return nil
}

// tooFew is the error of a run on fewer airports than the person acts need.
func tooFew(n int) error {
	return fmt.Errorf("the demo needs at least %d airports, it has %d", MinRows, n)
}
