package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// The CLI's copies of a log or a read model (audit's copy of a running
// store's log, audit --at's read model, doctor's rebuild, a replicated
// stream read into a temporary log) are private and temporary: they must
// not outlive the command, however it ends. The process keeps them all
// in one directory of its own, $TMPDIR/hikoutei-run-<pid>-*, made its
// TMPDIR for the command (so the library's temporary directories land in
// it too), and removes it:
//   - when the command returns, whatever it returned;
//   - on SIGINT, SIGTERM and SIGHUP: the command's context is cancelled
//     and it gets scratchGrace to return; then the directory is removed
//     and the signal delivered again (the process dies of it, as a shell
//     expects);
//   - SIGPIPE (a reader such as `| head` went away) does not kill the
//     process: the write fails with EPIPE, the command returns, the
//     directory is removed, then the process dies of SIGPIPE;
//   - after kill -9, which nobody can catch: the next hikoutei command
//     removes the directory of a process that no longer runs.
// Commands print a copy's data only after its file was opened and
// removed, where they can (audit), so even kill -9 while printing leaves
// nothing behind.

// scratchPrefix names a process's scratch directory: hikoutei-run-<pid>-.
const scratchPrefix = "hikoutei-run-"

// scratchGrace is how long a command has to return after SIGINT,
// SIGTERM or SIGHUP before its scratch directory is removed under it.
const scratchGrace = 3 * time.Second

// processScratch is this process's scratch directory ("" before
// setupProcess, or when the temporary directory lies inside a store).
var processScratch string

// userTemp is the temporary directory the process was started with
// (its TMPDIR before setupProcess pointed TMPDIR at the scratch
// directory): what a command leaves for the user on purpose (the demo's
// store) goes there, never into the scratch directory removed at exit.
var userTemp string

// userTempDir is where a command leaves a temporary directory for the
// user: the temporary directory the process was started with.
func userTempDir() string {
	if userTemp != "" {
		return userTemp
	}
	return os.TempDir()
}

// tempInStore is why the CLI makes no scratch copy: the temporary
// directory lies inside a store directory (nil: it does not).
var tempInStore error

// ownSignals is set by a command that handles SIGINT and SIGTERM itself
// (serve, demo, fake-sheets, the campaigns: interruptible): the process's
// handler then leaves those signals to it.
var ownSignals atomic.Bool

// process is what setupProcess prepared: the context commands run with,
// and how to end.
type process struct {
	ctx    context.Context
	cancel context.CancelFunc
	sigs   chan os.Signal
	done   chan struct{}
	once   sync.Once
	got    atomic.Int32 // the signal that cancelled ctx (0: none)
}

// setupProcess prepares the process for one command (main only; tests
// that call run in the test process skip it): it removes the scratch
// directories of hikoutei processes that no longer run, makes this
// process's own and its TMPDIR, and handles the signals.
func setupProcess() *process {
	// The signals are caught before the scratch directory exists: one
	// that came between its creation and the handler killed the process
	// and left the directory behind.
	p := &process{sigs: make(chan os.Signal, 4), done: make(chan struct{})}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	signal.Notify(p.sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE)
	tmp := os.TempDir()
	userTemp = tmp
	sweepScratch(tmp)
	var inside *events.InsideStoreError
	if _, err := events.CheckOutside(filepath.Join(tmp, "x")); errors.As(err, &inside) {
		tempInStore = fmt.Errorf("%w: the temporary directory %s (TMPDIR) is inside the store directory %s: the CLI makes no copy there; set TMPDIR outside every store directory",
			events.ErrTargetInsideStore, tmp, inside.Store)
	} else if err != nil {
		tempInStore = fmt.Errorf("the temporary directory %s (TMPDIR): %w", tmp, err)
	} else if dir, err := os.MkdirTemp(tmp, scratchPrefix+strconv.Itoa(os.Getpid())+"-"); err == nil {
		processScratch = dir
		os.Setenv("TMPDIR", dir)
	}
	go p.handle()
	return p
}

// handle acts on the signals until the command returned.
func (p *process) handle() {
	for {
		select {
		case <-p.done:
			return
		case sig := <-p.sigs:
			if sig == syscall.SIGPIPE || ownSignals.Load() {
				continue // EPIPE ends the command; a command with its own handling stops itself
			}
			p.got.Store(int32(sig.(syscall.Signal)))
			p.cancel()
			select {
			case <-p.done:
				return // the command returned: finish removes the directory and dies of sig
			case <-time.After(scratchGrace):
			}
			removeScratch()
			die(sig.(syscall.Signal))
		}
	}
}

// finish ends the process after the command returned with code: the
// scratch directory removed, then dying of the signal that ended it (a
// broken pipe, an interrupt), else exiting with code.
func (p *process) finish(code int) {
	p.once.Do(func() { close(p.done) })
	removeScratch() // signals still caught: one arriving now cannot kill the process before the directory is gone
	signal.Stop(p.sigs)
	sig := syscall.Signal(p.got.Load())
	if late, ok := p.lateSignal(); ok && sig == 0 {
		sig = late
	}
	switch {
	case code == exitBrokenPipe:
		die(syscall.SIGPIPE)
	case sig != 0:
		die(sig) // the command stopped because of it: die of it, as the shell expects
	}
	os.Exit(code)
}

// lateSignal is a signal that came after the command returned (caught,
// not acted on, while the scratch directory was removed): the process
// dies of it as it would have.
func (p *process) lateSignal() (syscall.Signal, bool) {
	select {
	case s := <-p.sigs:
		sig, _ := s.(syscall.Signal)
		return sig, sig != syscall.SIGPIPE && !ownSignals.Load()
	default:
		return 0, false
	}
}

// removeScratch removes the process's scratch directory (a copy still
// being written into it by a running store is removed with it).
func removeScratch() {
	if processScratch == "" {
		return
	}
	for range 5 {
		if err := os.RemoveAll(processScratch); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond) // a file appeared while removing
	}
}

// sweepScratch removes, in the temporary directory tmp, the scratch
// directories of this user's hikoutei processes that no longer run
// (killed with SIGKILL, or the machine stopped).
func sweepScratch(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), scratchPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, _ := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 || pid == os.Getpid() || processRuns(pid) || !ownedByMe(filepath.Join(tmp, e.Name())) {
			continue
		}
		_ = os.RemoveAll(filepath.Join(tmp, e.Name()))
	}
}

// scratchDir makes a private (0700) temporary directory beside near (on
// the same file system), or, for near "", inside the process's scratch
// directory (see above): never inside a store directory.
func scratchDir(near, pattern string) (string, error) {
	parent := ""
	if near != "" {
		abs, err := filepath.Abs(near)
		if err != nil {
			return "", err
		}
		parent = filepath.Dir(abs)
	} else if tempInStore != nil {
		return "", tempInStore
	}
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", err
	}
	if _, err := events.CheckOutside(filepath.Join(dir, "x")); err != nil {
		os.Remove(dir)
		return "", err
	}
	return dir, nil
}
