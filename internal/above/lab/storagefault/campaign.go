package storagefault

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/internal/config"
)

// Config configures a storage fault campaign.
type Config struct {
	Dir  string // work directory (each run gets a subdirectory, removed after it)
	Runs int
	Seed uint64
	// Spawn returns the command of one child (`hikoutei-lab storage-run`,
	// or the re-executed test binary); the campaign adds the run to its
	// environment and reads its stdout.
	Spawn func() *exec.Cmd
	// RunTimeout bounds one run (default 2 min); a run past it is killed
	// and reported as a hang.
	RunTimeout time.Duration
	Out        io.Writer // a line per run (nil = discard)
}

// Result is what a campaign saw. Line renders its closing line.
type Result struct {
	Runs int
	// AckedLost counts acknowledged notes that a run without destroyed
	// bytes (disk full, write errors, torn in-flight writes) did not return
	// as acknowledged.
	AckedLost int
	// Panics counts children that died of a panic or a fault.
	Panics int
	// Undetected counts runs whose damaged store returned wrong or missing
	// data while nothing — Open, reads, Health, doctor — reported it.
	Undetected int
	Detected   int // damaged runs that reported it
	Harmless   int // destructive runs whose store returned everything and reported nothing
	ByKind     map[Kind]int
	Problems   []string // one line per finding
}

// Line is the campaign's last line.
func (r Result) Line() string {
	return fmt.Sprintf("storage: runs=%d acked_lost=%d panics=%d undetected_corruptions=%d", r.Runs, r.AckedLost, r.Panics, r.Undetected)
}

// OK reports a campaign with no finding.
func (r Result) OK() bool { return len(r.Problems) == 0 }

// Run executes a campaign. Errors: setup failures and ctx's.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.RunTimeout <= 0 {
		cfg.RunTimeout = 2 * time.Minute
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	res := Result{ByKind: map[Kind]int{}}
	for i := 1; i <= cfg.Runs; i++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		spec := RunSpec{Kind: Kinds[(i-1)%len(Kinds)], Seed: cfg.Seed*1_000_003 + uint64(i), Dir: filepath.Join(cfg.Dir, fmt.Sprintf("run-%d", i))}
		if err := os.MkdirAll(spec.Dir, 0o700); err != nil {
			return res, err
		}
		line := res.add(spec, runChild(ctx, cfg, spec))
		fmt.Fprintf(cfg.Out, "storage: run %d %s: %s\n", i, spec.Kind, line)
		if err := os.RemoveAll(spec.Dir); err != nil {
			return res, err
		}
	}
	return res, nil
}

// childOutcome is what a child process left: its result, or why not.
type childOutcome struct {
	res    RunResult
	panic  string // the panic or fault the child died of
	failed string // any other way it failed to report
}

// runChild runs spec in a child process.
func runChild(ctx context.Context, cfg Config, spec RunSpec) childOutcome {
	ctx, cancel := context.WithTimeout(ctx, cfg.RunTimeout)
	defer cancel()
	raw, _ := json.Marshal(spec)
	cmd := cfg.Spawn()
	cmd.Env = append(os.Environ(), config.EnvStorageRun+"="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var err error
	if spec.Kind == KindDiskFull {
		_, err = StartIsolated(cmd)
	} else {
		err = cmd.Start()
	}
	if err != nil {
		return childOutcome{failed: "start: " + err.Error()}
	}
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Kill() })
	waitErr := cmd.Wait()
	stop()
	return outcome(ctx, waitErr, stdout.Bytes(), stderr.String())
}

func outcome(ctx context.Context, waitErr error, stdout []byte, stderr string) childOutcome {
	if p := panicLine(stderr); p != "" {
		return childOutcome{panic: p}
	}
	if ctx.Err() != nil {
		return childOutcome{failed: "hung: killed after the run timeout"}
	}
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			var o childOutcome
			if err := json.Unmarshal([]byte(rest), &o.res); err != nil {
				return childOutcome{failed: "result: " + err.Error()}
			}
			return o
		}
	}
	return childOutcome{failed: fmt.Sprintf("no result (%v): %s", waitErr, lastLine(stderr))}
}

// panicLine returns the line a Go panic or fatal fault printed ("" if none).
func panicLine(stderr string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "fatal error: ") || strings.HasPrefix(line, "unexpected fault address") {
			return line
		}
	}
	return ""
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// add counts a run's outcome and returns its progress line.
func (r *Result) add(spec RunSpec, o childOutcome) string {
	r.Runs++
	r.ByKind[spec.Kind]++
	switch {
	case o.panic != "":
		r.Panics++
		return r.problem(spec, "PANIC "+o.panic)
	case o.failed != "":
		return r.problem(spec, "FAILED "+o.failed)
	}
	return r.judge(spec, o.res)
}

// countCodes renders codes as "code×n, …" in first-seen order.
func countCodes(codes []string) string {
	n := map[string]int{}
	var order []string
	for _, c := range codes {
		if n[c] == 0 {
			order = append(order, c)
		}
		n[c]++
	}
	parts := make([]string, len(order))
	for i, c := range order {
		parts[i] = fmt.Sprintf("%s×%d", c, n[c])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (r *Result) problem(spec RunSpec, what string) string {
	r.Problems = append(r.Problems, fmt.Sprintf("%s seed %d: %s", spec.Kind, spec.Seed, what))
	return what
}

// judge classifies a reported run.
func (r *Result) judge(spec RunSpec, res RunResult) string {
	p := res.Probe
	line := fmt.Sprintf("%s; acked %d, refused %s, reported %v", res.Detail, res.Acked, countCodes(res.Codes), p.Reported)
	var findings []string
	if res.Destructive {
		switch {
		case p.Damaged() && len(p.Reported) == 0:
			r.Undetected++
			findings = append(findings, fmt.Sprintf("UNDETECTED: %d missing, %d wrong", len(p.Missing), len(p.Wrong)))
		case p.Damaged() || len(p.Reported) > 0:
			r.Detected++
		default:
			r.Harmless++
		}
	} else if lost := len(p.Missing) + len(p.Wrong); lost > 0 {
		r.AckedLost += lost
		findings = append(findings, fmt.Sprintf("ACKED LOST: %d missing, %d wrong", len(p.Missing), len(p.Wrong)))
	} else if len(p.Reported) > 0 {
		findings = append(findings, fmt.Sprintf("the store still reports damage once the fault is gone: %v", p.Reported))
	}
	if len(p.Appeared) > 0 {
		findings = append(findings, fmt.Sprintf("%d notes of refused commits present", len(p.Appeared)))
	}
	if res.Unreported > 0 {
		findings = append(findings, fmt.Sprintf("%d refusals not in Health", res.Unreported))
	}
	findings = append(findings, res.Problems...)
	for _, f := range findings {
		r.problem(spec, f+" ("+res.Detail+")")
	}
	return strings.Join(append([]string{line}, findings...), "; ")
}
