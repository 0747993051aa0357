package crash

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/mirrorcheck"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// personPrefix starts every note a person types.
const personPrefix = "person-"

// Faults selects the emulator's fault mix during the runs.
type Faults string

// Fault modes: none, on for every run, on for every other run.
const (
	FaultsOff   Faults = "off"
	FaultsOn    Faults = "on"
	FaultsMixed Faults = "mixed"
)

// Config configures a campaign.
type Config struct {
	Dir    string // store directory (created; should be empty)
	Kills  int    // runs, each ending in a SIGKILL
	Seed   uint64
	Faults Faults
	// Spawn returns the command of one child; the campaign adds WorkerEnv
	// (and HIKOUTEI_FAILPOINTS) to its environment and reads its stdout.
	Spawn func() *exec.Cmd
	// MaxRun bounds how long a child runs before it is killed (default 1.5 s;
	// each run is killed at a seeded instant in [0, MaxRun) after it opened
	// the store, or earlier at a failpoint).
	MaxRun time.Duration
	// Armed, when set, arms run i with the failpoint spec Armed[(i-1) %
	// len(Armed)] (e.g. "log.after_commit=crash@2") instead of the seeded
	// choice, and leaves the timer a long time, so the failpoint ends the run.
	Armed []string
	// Bucket keeps the store's sealed segments in an object store: a
	// gocloud.dev/blob file bucket in the folder DIR.bucket (BucketSuffix) that every
	// process of the campaign opens as its SegmentStore, instead of the
	// store's segments folder. The checks read the bucket and the folder.
	Bucket bool
	// QuiesceTimeout bounds the final convergence (default 90 s).
	QuiesceTimeout time.Duration
	Out            io.Writer    // progress lines (nil = discard)
	Logger         *slog.Logger // the store's logger in the parent (nil = discard)
}

// Result is what a campaign saw. Line renders the closing line.
type Result struct {
	Runs          int // children killed
	Acked         int // commits, applied acknowledge commands and applied resolutions the children saw acknowledged
	Lost          int // acknowledged but missing from the log or the read model
	Duplicates    int // extra rows with an anchor already on the tab, summed over every check
	Mismatches    int // read model != rebuild, sheet != canonical, unsettled effects, epochs not increasing
	Failpoints    map[string]int
	OpenConflicts int
	// Review counts Input rows of deleted entities that carry a person's
	// note and whose delete settled as a conflict (the person edited the
	// row first): cleanup leaves rows with a person's data for review (I21).
	Review int
	Litter []string // files a crash left that nothing removes (see Litter)
	// WorkerErrors are errors that stopped a child's workload before its
	// kill (reported; the checks decide whether anything was lost).
	WorkerErrors []string
	Problems     []string // one line per lost/duplicate/mismatch finding
	// Resolutions the children ran (Store.ResolveConflict, one per command
	// id): applied keep_system, applied use_sheet, and stale or rejected
	// (a correct outcome: the conflict had moved on or was resolved first).
	ResolvedKeepSystem, ResolvedUseSheet, ResolutionsUnapplied int
	// Mirror is what the check of the NATS event mirror saw after
	// quiescence (I36): the last log seq the stream holds and the log's
	// head; a stream that does not reach the head or does not verify is a
	// mismatch.
	Mirror mirrorcheck.Result
}

// Line is the campaign's last line: the four counts first (scripts parse
// that prefix), then the resolutions.
func (r Result) Line() string {
	return fmt.Sprintf("crash: runs=%d lost=%d duplicates=%d mismatches=%d resolved_keep_system=%d resolved_use_sheet=%d resolutions_unapplied=%d %s",
		r.Runs, r.Lost, r.Duplicates, r.Mismatches, r.ResolvedKeepSystem, r.ResolvedUseSheet, r.ResolutionsUnapplied, r.Mirror)
}

// OK reports a clean campaign.
func (r Result) OK() bool { return r.Lost == 0 && r.Duplicates == 0 && r.Mismatches == 0 }

type campaign struct {
	cfg    Config
	emu    *emulator.Emulator
	url    string
	rng    *rand.Rand
	res    Result
	checks *checker
	out    io.Writer
	fpTurn int
}

// Run executes a campaign and returns what it saw. Errors: setup
// failures and children that die without being killed (a crash of the
// store is a finding, reported as an error with the child's stderr).
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.MaxRun <= 0 {
		cfg.MaxRun = 1500 * time.Millisecond
	}
	if cfg.QuiesceTimeout <= 0 {
		cfg.QuiesceTimeout = 90 * time.Second
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Faults == "" {
		cfg.Faults = FaultsOff
	}
	emu := emulator.New(emulator.Options{AutoCreate: true, Seed: int64(cfg.Seed)})
	srv := httptest.NewServer(emu.Handler())
	defer srv.Close()
	c := &campaign{cfg: cfg, emu: emu, url: srv.URL, rng: rand.New(rand.NewPCG(cfg.Seed, 0xc4a54)), out: cfg.Out,
		res: Result{Failpoints: map[string]int{}}}
	c.checks = newChecker(cfg.Dir, c)
	c.checks.bucket = bucketPath(cfg.Dir, cfg.Bucket)
	for run := 1; run <= cfg.Kills; run++ {
		if err := ctx.Err(); err != nil {
			return c.res, err
		}
		if err := c.oneRun(ctx, run); err != nil {
			return c.res, fmt.Errorf("run %d: %w", run, err)
		}
		if err := c.checks.afterRun(ctx, run, c.rng.IntN(8) == 0); err != nil {
			return c.res, fmt.Errorf("check after run %d: %w", run, err)
		}
	}
	if err := c.quiesce(ctx); err != nil {
		return c.res, fmt.Errorf("quiescence: %w", err)
	}
	return c.res, nil
}

func (c *campaign) problem(kind *int, format string, args ...any) {
	*kind++
	msg := fmt.Sprintf(format, args...)
	c.res.Problems = append(c.res.Problems, msg)
	fmt.Fprintln(c.out, "crash: PROBLEM "+msg)
}

// oneRun starts a child, lets it work and kills it: at a failpoint (about a
// third of the runs, chosen by the seed) or with SIGKILL at a seeded
// instant after it opened the store.
func (c *campaign) oneRun(ctx context.Context, run int) error {
	faults := c.cfg.Faults == FaultsOn || (c.cfg.Faults == FaultsMixed && run%2 == 1)
	c.setFaults(faults)
	defer c.emu.ClearFaults()
	fp := ""
	if len(c.cfg.Armed) > 0 {
		fp = c.cfg.Armed[(run-1)%len(c.cfg.Armed)]
	} else if c.rng.IntN(3) == 0 { // the failpoints take turns, so a short campaign reaches each
		name := failpoint.Workload[c.fpTurn%len(failpoint.Workload)]
		fp = name + "=crash@" + strconv.Itoa(crashAt(name, c.rng))
		c.fpTurn++
	}
	// Every fifth run (and every run armed at a compact.* failpoint)
	// compacts log.db offline before it opens the store.
	compact := run%5 == 0 || strings.HasPrefix(fp, "compact.")
	wc := WorkerConfig{Dir: c.cfg.Dir, Endpoint: c.url, Seed: c.cfg.Seed, Run: run, Compact: compact, Bucket: c.checks.bucket}
	raw, _ := json.Marshal(wc)
	cmd := c.cfg.Spawn()
	cmd.Env = append(os.Environ(), WorkerEnv+"="+string(raw), failpoint.EnvVar+"="+fp)
	var stderr tail
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	opened := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		c.read(stdout, opened)
	}()
	stopPeople := c.people(run)
	maxRun := c.cfg.MaxRun
	if fp != "" {
		maxRun *= 2 // give the failpoint a chance to be reached first
	}
	delay := time.Duration(c.rng.Int64N(int64(maxRun)))
	if len(c.cfg.Armed) > 0 {
		// The failpoint, not the timer, ends the run: the timer is only a
		// bound for a failpoint never reached (a slow, shared machine
		// reaches a snapshot's second take later, never sooner).
		delay = 10 * c.cfg.MaxRun
	}
	exited := make(chan struct{})
	go func() {
		<-readDone // all of stdout read before Wait (os/exec)
		_ = cmd.Wait()
		close(exited)
	}()
	killed := false
	select {
	case <-opened:
		select {
		case <-time.After(delay):
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
		case <-exited:
		}
	case <-exited:
	case <-time.After(AcquireWait + 10*time.Second):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
		stopPeople()
		return fmt.Errorf("child never opened the store; stderr:\n%s", stderr.String())
	}
	<-exited
	stopPeople()
	st := cmd.ProcessState
	ws, _ := st.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		return fmt.Errorf("child ended by itself (%v, failpoint %q); stderr:\n%s", st, fp, stderr.String())
	}
	how := fmt.Sprintf("kill after %v", delay.Round(time.Millisecond))
	if fp != "" {
		how += " (armed " + fp + ")"
	}
	if name, ok := firedFailpoint(stderr.String()); ok {
		c.res.Failpoints[name]++
		how = "failpoint " + name
	} else if !killed {
		how = "killed"
	}
	c.res.Runs++
	fmt.Fprintf(c.out, "crash: run %d: %s (faults %v), acked so far %d\n", run, how, faults, c.res.Acked)
	return nil
}

// crashAt is the hit of failpoint name a seeded run crashes at: points
// reached once per open or per compaction at the first, those of an
// erasure (a few per run) at the first or second, seals at one of the
// first three, the rest at one of the first six.
func crashAt(name string, rng *rand.Rand) int {
	switch {
	case name == failpoint.LeaseFileBeforeRename, strings.HasPrefix(name, "compact."):
		return 1
	case name == failpoint.EraseAfterEvent, name == failpoint.KeyringBeforeRename:
		return 1 + rng.IntN(2)
	case strings.HasPrefix(name, "seal."):
		return 1 + rng.IntN(3)
	}
	return 1 + rng.IntN(6)
}

func firedFailpoint(stderr string) (string, bool) {
	for _, l := range strings.Split(stderr, "\n") {
		if name, ok := strings.CutPrefix(l, "failpoint: "); ok {
			if name, ok = strings.CutSuffix(name, " crash"); ok {
				return name, true
			}
		}
	}
	return "", false
}

// read consumes the child's stdout lines.
func (c *campaign) read(r io.Reader, opened chan struct{}) {
	sc := bufio.NewScanner(r)
	once := sync.Once{}
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case lineOpen:
			epoch, _ := strconv.ParseUint(f[1], 10, 64)
			c.checks.opened(epoch)
			once.Do(func() { close(opened) })
		case lineAck:
			if len(f) == 6 {
				first, _ := strconv.ParseUint(f[2], 10, 64)
				last, _ := strconv.ParseUint(f[3], 10, 64)
				c.checks.ack(ack{commit: f[1], first: first, last: last, id: f[4], op: f[5]})
			}
		case lineErr:
			c.checks.mu.Lock()
			c.res.WorkerErrors = append(c.res.WorkerErrors, strings.TrimPrefix(sc.Text(), lineErr+" "))
			c.checks.mu.Unlock()
			fmt.Fprintln(c.out, "crash: worker stopped: "+sc.Text())
		case lineAckCmd:
			if len(f) == 2 {
				c.checks.ackCmd(f[1])
			}
		case linePII:
			if len(f) == 3 {
				c.checks.personal.value(f[1], f[2])
			}
		case lineErased:
			if len(f) == 2 {
				c.checks.personal.erasedAck(f[1])
			}
		case lineResolved, lineUnapplied:
			if r, ok := parseResolution(sc.Text()); ok {
				c.checks.resolution(r)
			}
		}
	}
}

// setFaults turns the emulator's seeded fault mix on or off: 429, 503,
// applied-then-503 and applied-then-lost on every request class. Its
// 429s ask for a retry after a second, not the quota's minute: the child
// honours Retry-After, and a minute's wait would take up whole runs (a
// 429 on the startup's authority read kept a run from dispatching at
// all), on a campaign whose every other interval is milliseconds.
func (c *campaign) setFaults(on bool) {
	if !on {
		c.emu.ClearFaults()
		return
	}
	c.emu.SetFaultRates(emulator.FaultRates{P429: 0.04, P503: 0.04, PApplyThen503: 0.03, PApplyThenDrop: 0.03, PHTML502: 0.01,
		RetryAfter: time.Second})
}

// people edits the spreadsheet the way people do while the child runs:
// notes on the Input tab, some colliding with the application's own note
// changes (conflicts). System-owned cells are not edited: drift on the
// System tab is only noticed by the next guarded update of that row, so a
// row the application never touches again would stay drifted. With
// the fault mix on it also scripts a hung write, which the client abandons
// after its request timeout (a timeout: uncertain, I24).
func (c *campaign) people(run int) (stop func()) {
	rng := rand.New(rand.NewPCG(c.cfg.Seed, uint64(run)<<16|0xed17))
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		p := c.emu.Person(SpreadsheetID)
		for k := 0; ; k++ {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(20+rng.IntN(60)) * time.Millisecond): // edit rate, not synchronisation
			}
			editRandomRow(p, rng, "Item_Input", "note", fmt.Sprintf("%s%d-%d", personPrefix, run, k))
			if c.emu.PendingFaults() == 0 && rng.IntN(40) == 0 && c.cfg.Faults != FaultsOff && (c.cfg.Faults == FaultsOn || run%2 == 1) {
				c.emu.ScriptFaults(emulator.Fault{Kind: emulator.FaultApplyThenHang, Match: emulator.MatchWrites})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// editRandomRow types text into column col of a random data row of tab
// (ignored while the tab does not exist yet).
func editRandomRow(p *emulator.Person, rng *rand.Rand, tab, col, text string) {
	rows, err := p.Displayed(tab)
	if err != nil || len(rows) < 2 {
		return
	}
	ci := -1
	for i, h := range rows[0] {
		if h == col {
			ci = i
		}
	}
	if ci < 0 || ci >= 26 {
		return
	}
	r := 1 + rng.IntN(len(rows)-1)
	_ = p.Type(tab, fmt.Sprintf("%c%d", 'A'+ci, r+1), text)
}

// tail keeps the last 16 KiB written to it (a child's stderr).
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 16<<10 {
		t.buf = t.buf[len(t.buf)-16<<10:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// removeReadModel deletes read.sqlite and its WAL files, so the next open
// restores the newest snapshot (or rebuilds) and replays the tail.
func removeReadModel(dir string) error {
	for _, suf := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(dir, hikoutei.ReadModelFile+suf)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
