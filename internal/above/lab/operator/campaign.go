// Package operator is the operator campaign (`make operator`):
// an operator's mistakes as seeded acts. Each run points backup, restore,
// salvage, replay or audit at a path of one class — the command's own
// store, another store, a running store, a file inside a store, a FIFO,
// /dev/zero, a symbolic link, or a fresh path — and may interrupt it
// (SIGPIPE by closing its output after one line, SIGINT, kill -9). It
// checks that no acknowledged commit of any store is lost, that no copy
// of a log or read model is left in the command's TMPDIR or written into
// a store directory, that every refusal carries a typed code, and that
// nothing panics.
package operator

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/disk"
)

// Config configures a campaign.
type Config struct {
	Dir  string // work directory (removed by the caller)
	Runs int
	Seed uint64
	// CLI returns the hikoutei CLI with args (the binary, or a test binary
	// that acts as it); the campaign adds TMPDIR to its environment.
	CLI func(args ...string) *exec.Cmd
	// Holder returns a process that holds the store in dir (Hold).
	Holder func(dir string) *exec.Cmd
	// CheckEvery is how many runs pass between checks of every store's
	// acknowledged commits (default 25; the last run is always checked).
	CheckEvery int
	Out        io.Writer // a line per run (nil = discard)
}

// Result is what a campaign found. Line renders its last line.
type Result struct {
	Runs      int
	Acked     int // commits the running store acknowledged
	AckedLost int // acknowledged commits a store no longer returns
	Leaks     int // copies left in TMPDIR or files written into a store directory
	Untyped   int // refusals without a typed code
	Panics    int // processes that died of a panic or fault, or reported a data race
	// Litter counts temporary files left beside a target outside any
	// store by a command killed with SIGKILL (the operator's own
	// directory; not TMPDIR, not a store).
	Litter   int
	Outcomes map[string]int // refused, succeeded, interrupted
	Problems []string
}

// Line is the campaign's last line.
func (r Result) Line() string {
	return fmt.Sprintf("operator: runs=%d acked_lost=%d leaks=%d untyped=%d panics=%d", r.Runs, r.AckedLost, r.Leaks, r.Untyped, r.Panics)
}

// OK reports a campaign with no problem.
func (r Result) OK() bool { return len(r.Problems) == 0 }

func (r *Result) problem(format string, args ...any) string {
	p := fmt.Sprintf(format, args...)
	r.Problems = append(r.Problems, p)
	return p
}

// campaign is a running campaign: its stores, its running store's
// holder, and what the holder acknowledged.
type campaign struct {
	cfg    Config
	rng    *rand.Rand
	res    Result
	a, b   string   // a closed store, and the store the holder runs
	aItems []string // the items committed to a
	backup string   // a backup of a
	hold   *holder
	acked  []string // every id the holder acknowledged
	mu     sync.Mutex
}

// Run executes a campaign. Errors: setup failures and ctx's.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.CheckEvery <= 0 {
		cfg.CheckEvery = 25
	}
	c := &campaign{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x0be7a702)), res: Result{Outcomes: map[string]int{}},
		a: filepath.Join(cfg.Dir, "a"), b: filepath.Join(cfg.Dir, "b"), backup: filepath.Join(cfg.Dir, "a.backup.db")}
	if err := c.setup(ctx); err != nil {
		return c.res, err
	}
	defer c.stopHolder()
	for i := 1; i <= cfg.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return c.res, err
		}
		if err := c.run(ctx, i); err != nil {
			return c.res, err
		}
		if i%cfg.CheckEvery == 0 || i == cfg.Runs {
			if err := c.checkStores(ctx, i); err != nil {
				return c.res, err
			}
		}
	}
	return c.res, nil
}

// setup makes store a (closed, with items), its backup, and starts the
// holder of store b.
func (c *campaign) setup(ctx context.Context) error {
	s, err := hikoutei.Open(ctx, c.a, hikoutei.Options{NoAdmin: true, HeartbeatInterval: -1}, ItemEntity)
	if err != nil {
		return err
	}
	for i := range 200 {
		id := fmt.Sprintf("a%03d", i)
		u := s.Begin()
		if err := u.Persist(&Item{ID: id, Name: "closed"}); err != nil {
			return err
		}
		if _, err := u.Commit(ctx); err != nil {
			return err
		}
		c.aItems = append(c.aItems, id)
	}
	if err := s.Close(); err != nil {
		return err
	}
	tmp := filepath.Join(c.cfg.Dir, "setup-tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	if out, err := c.command(tmp, "backup", "--dir", c.a, "--out", c.backup).CombinedOutput(); err != nil {
		return fmt.Errorf("backup of a: %v: %s", err, out)
	}
	return c.startHolder()
}

// command is the CLI with args and TMPDIR tmp.
func (c *campaign) command(tmp string, args ...string) *exec.Cmd {
	cmd := c.cfg.CLI(args...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	return cmd
}

// holder is the process holding store b.
type holder struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	done   chan error
}

func (c *campaign) startHolder() error {
	h := &holder{cmd: c.cfg.Holder(c.b), done: make(chan error, 1)}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	h.cmd.Stderr = &h.stderr
	if err := h.cmd.Start(); err != nil {
		return err
	}
	held := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := false
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "held" && !once:
				once = true
				close(held)
			case strings.HasPrefix(line, "ack "):
				c.mu.Lock()
				c.acked = append(c.acked, strings.TrimPrefix(line, "ack "))
				c.mu.Unlock()
			}
		}
		h.done <- h.cmd.Wait()
	}()
	select {
	case <-held:
	case err := <-h.done:
		return fmt.Errorf("the holder of %s exited: %v: %s", c.b, err, h.stderr.String())
	case <-time.After(2 * time.Minute):
		_ = h.cmd.Process.Kill()
		return fmt.Errorf("the holder of %s did not open it: %s", c.b, h.stderr.String())
	}
	c.hold = h
	return nil
}

// stopHolder stops the holder (SIGINT: it closes the store) and checks
// it did not panic.
func (c *campaign) stopHolder() {
	h := c.hold
	if h == nil {
		return
	}
	c.hold = nil
	_ = h.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-h.done:
	case <-time.After(time.Minute):
		_ = h.cmd.Process.Kill()
		<-h.done
		c.res.problem("the holder of %s did not stop within a minute of SIGINT", c.b)
	}
	if p := panicLine(h.stderr.String()); p != "" {
		c.res.Panics++
		c.res.problem("holder: %s", p)
	}
}

// checkStores stops the holder and checks that every store returns every
// commit it acknowledged and that its hash chain verifies; then it starts
// the holder again.
func (c *campaign) checkStores(ctx context.Context, run int) error {
	c.stopHolder()
	c.mu.Lock()
	acked := slices.Clone(c.acked)
	c.mu.Unlock()
	c.res.Acked = len(acked)
	for _, st := range []struct {
		dir  string
		want []string
	}{{c.a, c.aItems}, {c.b, acked}} {
		missing, err := missingItems(ctx, st.dir, st.want)
		if err != nil {
			c.res.AckedLost += len(st.want)
			c.res.problem("after run %d: store %s does not open: %v", run, st.dir, err)
			continue
		}
		if len(missing) > 0 {
			c.res.AckedLost += len(missing)
			c.res.problem("after run %d: store %s lost %d acknowledged commits (e.g. %s)", run, st.dir, len(missing), missing[0])
		}
		tmp := filepath.Join(c.cfg.Dir, "check-tmp")
		_ = os.MkdirAll(tmp, 0o700)
		if out, err := c.command(tmp, "audit", "verify", "--dir", st.dir).CombinedOutput(); err != nil {
			c.res.problem("after run %d: audit verify --dir %s: %v: %s", run, st.dir, err, lastLine(string(out)))
		}
	}
	fmt.Fprintf(c.cfg.Out, "operator: after run %d: stores checked, %d commits acknowledged by the running store\n", run, len(acked))
	return c.startHolder()
}

// missingItems opens the store in dir and returns which of want it lacks.
func missingItems(ctx context.Context, dir string, want []string) ([]string, error) {
	s, err := hikoutei.Open(ctx, dir, hikoutei.Options{NoAdmin: true, HeartbeatInterval: -1}, ItemEntity)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	items, err := hikoutei.Find[Item](ctx, s)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(items))
	for _, it := range items {
		have[it.ID] = true
	}
	var missing []string
	for _, id := range want {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// panicLine returns the line of a Go panic, fault or data race in stderr.
func panicLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") ||
			strings.HasPrefix(line, "unexpected fault address") || strings.Contains(line, "WARNING: DATA RACE") {
			return line
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// typedRefusal matches the first line of a refusal: a stable code first.
var typedRefusal = regexp.MustCompile(`^hikoutei: [a-z][a-z0-9]*(_[a-z0-9]+)+(:|$| \()`)

// typed reports whether a command that exited with code refused with a
// typed code: its stderr's message leads with one (a usage error, exit 2,
// is typed by its exit code; damage, exit 3, names its code).
func typed(code int, stderr string) bool {
	if code == 2 {
		return true
	}
	for _, line := range strings.Split(stderr, "\n") {
		if typedRefusal.MatchString(line) {
			return true
		}
	}
	return false
}

// storeEntries are what a store directory may hold besides the read
// models it set aside (disk.ParseSetAside); anything else in it was
// written there by another command.
var storeEntries = regexp.MustCompile(`^(log\.db|read\.sqlite(-wal|-shm|-journal)?|lease\.toml|admin\.sock|snapshots|nats-[a-z]+\.nk)$`)

// foreign lists the entries of store dir (and of its snapshots/) that no
// store writes there.
func foreign(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if _, aside := disk.ParseSetAside(e.Name()); !aside && !storeEntries.MatchString(e.Name()) {
			out = append(out, filepath.Join(filepath.Base(dir), e.Name()))
		}
	}
	snaps, _ := os.ReadDir(filepath.Join(dir, "snapshots"))
	for _, e := range snaps {
		if n := e.Name(); strings.Contains(n, "x.db") || strings.Contains(n, ".tmp-") || strings.HasPrefix(n, "hikoutei-") {
			out = append(out, filepath.Join(filepath.Base(dir), "snapshots", n))
		}
	}
	return out
}

// everything lists every path under dir (relative).
func everything(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != dir {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// litter lists the temporary files a killed command left in dir.
func litter(dir string) []string {
	var out []string
	for _, p := range everything(dir) {
		base := filepath.Base(p)
		if strings.HasPrefix(base, ".") && (strings.Contains(base, ".tmp-") || strings.Contains(base, ".replay-") || strings.HasPrefix(base, ".hikoutei-")) {
			out = append(out, p)
		}
	}
	return out
}

var errDevZero = errors.New("/dev/zero is no longer a character device")
