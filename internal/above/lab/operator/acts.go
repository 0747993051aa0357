package operator

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// expect is what an act must end with when nothing interrupts it.
type expect int

const (
	refuse  expect = iota // a non-zero exit with a typed code
	succeed               // exit 0
	either                // either; a failure still carries a typed code
)

// Interruptions.
const (
	none    = "none"
	sigpipe = "sigpipe" // stdout closed after one line (`| head -1`)
	sigint  = "sigint"
	kill9   = "kill-9"
)

// act is one command of a run.
type act struct {
	what      string // command and path class, for the report
	args      []string
	want      expect
	interrupt string
	delay     time.Duration // before SIGINT or kill -9
	tmpdir    string        // TMPDIR ("": the run's own)
}

// paths are the path classes of one run.
type paths struct {
	w        string // the run's own directory (outside every store)
	fifo     string // a FIFO
	linkFile string // a symbolic link to store a's log.db
	linkA    string // a symbolic link to store a's directory
	linkB    string // a symbolic link to the running store's directory
	backup   string // a copy of a backup of store a
}

func (c *campaign) makePaths(w string) (paths, error) {
	p := paths{w: w, fifo: filepath.Join(w, "fifo"), linkFile: filepath.Join(w, "link-a.db"), linkA: filepath.Join(w, "link-a"),
		linkB: filepath.Join(w, "link-b"), backup: filepath.Join(w, "backup.db")}
	b, err := os.ReadFile(c.backup)
	err = errors.Join(err, os.MkdirAll(w, 0o700), syscall.Mkfifo(p.fifo, 0o600), os.Symlink(filepath.Join(c.a, "log.db"), p.linkFile),
		os.Symlink(c.a, p.linkA), os.Symlink(c.b, p.linkB))
	if err == nil {
		err = os.WriteFile(p.backup, b, 0o600)
	}
	return p, err
}

// pick draws run i's act.
func (c *campaign) pick(p paths) act {
	r := c.rng
	oneOf := func(n int) int { return r.IntN(n) }
	src, other := c.a, c.b
	if oneOf(2) == 0 {
		src, other = c.b, c.a
	}
	fresh := filepath.Join(p.w, "out.db")
	outputs := []struct {
		class, path string
		want        expect
	}{
		{"own store", filepath.Join(src, "x.db"), refuse}, {"another store's log", filepath.Join(other, "log.db"), refuse},
		{"the running store's log", filepath.Join(c.b, "log.db"), refuse}, {"a file inside a store", filepath.Join(c.b, "snapshots", "x.db"), refuse},
		{"a store's read model", filepath.Join(c.a, "read.sqlite"), refuse}, {"a FIFO", p.fifo, refuse}, {"/dev/zero", "/dev/zero", refuse},
		{"a symlink to a store", filepath.Join(p.linkB, "x.db"), refuse}, {"a symlink to a log", p.linkFile, refuse}, {"a fresh path", fresh, succeed},
	}
	dirs := []struct {
		class, path string
		want        expect
	}{
		{"a fresh directory", filepath.Join(p.w, "new"), succeed}, {"inside the running store", filepath.Join(c.b, "new"), refuse},
		{"another store", c.a, refuse}, {"/dev/zero", "/dev/zero", refuse}, {"a FIFO", p.fifo, refuse}, {"a symlink to a store", p.linkB, refuse},
		{"a file inside a store", filepath.Join(c.a, "read.sqlite", "new"), refuse},
	}
	sources := []struct {
		class, path string
		want        expect
	}{
		{"a closed store's log", filepath.Join(c.a, "log.db"), succeed}, {"the running store's log", filepath.Join(c.b, "log.db"), either},
		{"a FIFO", p.fifo, refuse}, {"/dev/zero", "/dev/zero", refuse}, {"a symlink to a log", p.linkFile, succeed},
		{"a store directory", c.a, refuse}, {"a backup", p.backup, succeed},
	}
	stores := []struct {
		class, path string
		want        expect
	}{
		{"a closed store", c.a, succeed}, {"the running store", c.b, succeed}, {"a file inside a store", filepath.Join(c.a, "log.db"), refuse},
		{"a FIFO", p.fifo, refuse}, {"/dev/zero", "/dev/zero", refuse}, {"a symlink to a store", p.linkA, succeed},
		{"a symlink to the running store", p.linkB, succeed},
	}
	force := func(args []string) []string {
		if oneOf(2) == 0 {
			return append(args, "--force")
		}
		return args
	}
	var a act
	if oneOf(12) == 0 {
		return act{what: "kill -9 of the running store, then status and poll", interrupt: kill9}
	}
	switch oneOf(8) {
	case 0, 1:
		o := outputs[oneOf(len(outputs))]
		a = act{what: fmt.Sprintf("backup of %s to %s", storeName(c, src), o.class), args: force([]string{"backup", "--dir", src, "--out", o.path}), want: o.want}
	case 2:
		o := outputs[oneOf(len(outputs))]
		a = act{what: "replay of a closed store to " + o.class, args: force([]string{"replay", "--dir", c.a, "--out", o.path}), want: o.want}
		if oneOf(4) == 0 {
			a = act{what: "replay of the running store", args: []string{"replay", "--dir", c.b, "--out", fresh}, want: refuse}
		}
	case 3:
		if oneOf(2) == 0 {
			s := sources[oneOf(len(sources))]
			a = act{what: "restore from " + s.class, args: []string{"restore", "--from", s.path, "--to", filepath.Join(p.w, "new")}, want: s.want}
		} else {
			d := dirs[oneOf(len(dirs))]
			a = act{what: "restore into " + d.class, args: []string{"restore", "--from", p.backup, "--to", d.path}, want: d.want}
		}
	case 4:
		if oneOf(2) == 0 {
			s := stores[oneOf(len(stores))]
			want := s.want
			if want == succeed {
				want = either // the running store's log is locked; a salvage may name lost sequences (exit 3)
			}
			a = act{what: "salvage of " + s.class, args: []string{"salvage", "--from", s.path, "--to", filepath.Join(p.w, "new")}, want: want}
		} else {
			d := dirs[oneOf(len(dirs))]
			a = act{what: "salvage into " + d.class, args: []string{"salvage", "--from", c.a, "--to", d.path}, want: d.want}
		}
	default:
		s := stores[oneOf(len(stores))]
		args := []string{"audit", "--dir", s.path}
		what := "audit of " + s.class
		switch oneOf(4) {
		case 0:
			args = append(args, "--entity", "Item", "--id", "a001", "--at", "5")
			what = "audit --at of " + s.class
		case 1:
			args = []string{"audit", "verify", "--dir", s.path}
			what = "audit verify of " + s.class
		case 2:
			args = append(args, "--json")
		}
		a = act{what: what, args: args, want: s.want}
		if oneOf(6) == 0 && s.want == succeed {
			// TMPDIR inside the running store: a copy must be refused, never written there.
			a.tmpdir, a.want, a.what = c.b, either, a.what+" with TMPDIR inside the running store"
		}
	}
	switch n := oneOf(10); {
	case n < 4:
		a.interrupt = none
	case n < 6 && a.args[0] == "audit":
		a.interrupt = sigpipe
	case n < 8:
		a.interrupt = sigint
	default:
		a.interrupt = kill9
	}
	a.delay = time.Duration(oneOf(120)) * time.Millisecond
	return a
}

func storeName(c *campaign, dir string) string {
	if dir == c.b {
		return "the running store"
	}
	return "a closed store"
}

// outcome is how an act ended.
type outcome struct {
	code        int // exit code (-1: died of a signal)
	interrupted bool
	stderr      string
}

// run is one run: its act, then the checks.
func (c *campaign) run(ctx context.Context, i int) error {
	w := filepath.Join(c.cfg.Dir, fmt.Sprintf("run-%d", i))
	tmp := filepath.Join(c.cfg.Dir, fmt.Sprintf("tmp-%d", i))
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	p, err := c.makePaths(w)
	if err != nil {
		return err
	}
	a := c.pick(p)
	if a.tmpdir == "" {
		a.tmpdir = tmp
	}
	var line string
	if a.args == nil {
		line, err = c.killHolder(i, tmp)
	} else {
		var o outcome
		if o, err = c.execute(ctx, a); err == nil {
			line = c.judge(i, a, o)
		}
	}
	if err != nil {
		return err
	}
	// A command killed with SIGKILL cannot remove its copies: the next
	// hikoutei command removes what a dead process left.
	if out, err := c.command(tmp, "version").CombinedOutput(); err != nil {
		line += "; " + c.res.problem("run %d: version after the act: %v: %s", i, err, lastLine(string(out)))
	}
	if left := everything(tmp); len(left) > 0 {
		c.res.Leaks += len(left)
		line += "; " + c.res.problem("run %d (%s, %s): left in TMPDIR: %v", i, a.what, a.interrupt, left)
	}
	for _, dir := range []string{c.a, c.b} {
		if f := foreign(dir); len(f) > 0 {
			c.res.Leaks += len(f)
			line += "; " + c.res.problem("run %d (%s, %s): written into a store directory: %v", i, a.what, a.interrupt, f)
		}
	}
	if l := litter(w); len(l) > 0 {
		c.res.Litter += len(l)
		line += fmt.Sprintf("; litter beside its target: %v", l)
	}
	if st, err := os.Lstat("/dev/zero"); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
		c.res.problem("run %d (%s): %v", i, a.what, errDevZero)
		return errDevZero // never go on: the machine was changed
	}
	fmt.Fprintf(c.cfg.Out, "operator: run %d %s [%s]: %s\n", i, a.what, a.interrupt, line)
	return errors.Join(os.RemoveAll(w), os.RemoveAll(tmp))
}

// execute runs a's command with its interruption.
func (c *campaign) execute(ctx context.Context, a act) (outcome, error) {
	cmd := c.command(a.tmpdir, a.args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var stdout io.ReadCloser
	var err error
	if a.interrupt == sigpipe {
		if stdout, err = cmd.StdoutPipe(); err != nil {
			return outcome{}, err
		}
	} else {
		cmd.Stdout = io.Discard
	}
	if err := cmd.Start(); err != nil {
		return outcome{}, err
	}
	done := make(chan error, 1)
	go func() {
		if stdout != nil {
			_, _ = bufio.NewReader(stdout).ReadString('\n') // one line, as `| head -1`
			stdout.Close()
		}
		done <- cmd.Wait()
	}()
	interrupted := false
	var werr error
	switch a.interrupt {
	case sigint, kill9:
		select {
		case werr = <-done:
		case <-time.After(a.delay):
			sig := syscall.SIGINT
			if a.interrupt == kill9 {
				sig = syscall.SIGKILL
			}
			interrupted = cmd.Process.Signal(sig) == nil
			werr = <-done
		}
	default:
		select {
		case werr = <-done:
		case <-time.After(2 * time.Minute):
			_ = cmd.Process.Kill()
			<-done
			return outcome{code: -1, stderr: "hung: killed after 2 minutes\n" + stderr.String()}, nil
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			<-done
			return outcome{}, ctx.Err()
		}
	}
	o := outcome{code: 0, stderr: stderr.String()}
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		o.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			o.code = -1
			o.interrupted = true // by our signal, or SIGPIPE from the closed output
		}
	} else if werr != nil {
		return outcome{}, werr
	}
	if interrupted && o.code != 0 {
		o.interrupted = true
	}
	return o, nil
}

// judge counts an act's outcome and returns its report.
func (c *campaign) judge(i int, a act, o outcome) string {
	if p := panicLine(o.stderr); p != "" {
		c.res.Panics++
		return c.res.problem("run %d (%s): %s", i, a.what, p)
	}
	c.res.Runs++
	switch {
	case o.interrupted:
		c.res.Outcomes["interrupted"]++
		return "interrupted"
	case o.code == 0 && a.want == refuse:
		return c.res.problem("run %d (%s): accepted, want a refusal", i, a.what)
	case o.code == 0:
		c.res.Outcomes["succeeded"]++
		return "succeeded"
	case !typed(o.code, o.stderr):
		c.res.Untyped++
		return c.res.problem("run %d (%s): exit %d without a typed code: %s", i, a.what, o.code, firstLine(o.stderr))
	case a.want == succeed && o.code != 3:
		return c.res.problem("run %d (%s): refused, want success: %s", i, a.what, firstLine(o.stderr))
	}
	c.res.Outcomes["refused"]++
	return fmt.Sprintf("refused (exit %d): %s", o.code, codeOf(o.stderr))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// codeOf is the code a refusal leads with.
func codeOf(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if m := typedRefusal.FindString(line); m != "" {
			return strings.TrimRight(strings.TrimPrefix(m, "hikoutei: "), ": (")
		}
	}
	return firstLine(stderr)
}

// killHolder kills the running store's process with SIGKILL (its
// acknowledged commits must survive), checks that status and poll say no
// process holds the store (lease.toml is left behind), and starts a new
// holder, which takes the store over.
func (c *campaign) killHolder(i int, tmp string) (string, error) {
	h := c.hold
	c.hold = nil
	_ = h.cmd.Process.Kill()
	<-h.done
	c.res.Runs++
	c.res.Outcomes["interrupted"]++
	line := "killed"
	out, err := c.command(tmp, "status", "--dir", c.b, "--json").CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"running":false`) || !strings.Contains(string(out), `"lease_leftover"`) {
		line = c.res.problem("run %d: status after kill -9 of the running store: %v: %s", i, err, lastLine(string(out)))
	}
	out, _ = c.command(tmp, "poll", "--dir", c.b).CombinedOutput()
	if !strings.Contains(string(out), "store_not_running") || strings.Contains(string(out), "restart it") {
		line = c.res.problem("run %d: poll after kill -9 of the running store: %s", i, lastLine(string(out)))
	}
	return line, c.startHolder()
}
