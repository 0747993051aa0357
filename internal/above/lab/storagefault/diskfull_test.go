package storagefault

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// runInChild runs spec in a re-executed test binary, as the campaign does.
func runInChild(t *testing.T, spec RunSpec) RunResult {
	t.Helper()
	if spec.Dir == "" {
		spec.Dir = t.TempDir()
	}
	cfg := Config{RunTimeout: testRunTimeout, Spawn: func() *exec.Cmd { return exec.Command(os.Args[0]) }}
	o := runChild(context.Background(), cfg, spec)
	if o.panic != "" || o.failed != "" {
		t.Fatalf("child: %s%s", o.panic, o.failed)
	}
	return o.res
}

// TestRepro1_DiskFullNeverLosesAcknowledgedCommits: on a 3 MB filesystem
// commits are refused once it is full — each refusal an error that says
// nothing was committed, reported by Health — and after space is freed
// the same store commits again; reopened, every commit answered durable
// is there and doctor finds nothing wrong.
func TestRepro1_DiskFullNeverLosesAcknowledgedCommits(t *testing.T) {
	r := runInChild(t, RunSpec{Kind: KindDiskFull, Seed: 1, Size: 3 << 20})
	t.Logf("%s: acked %d, refusals %d", r.Detail, r.Acked, len(r.Codes))
	if r.Acked == 0 || len(r.Codes) != maxRefused {
		t.Fatalf("the disk never filled: %+v", r)
	}
	if p := r.Probe; len(p.Missing)+len(p.Wrong)+len(p.Appeared)+len(p.Reported)+r.Unreported+len(r.Problems) > 0 {
		t.Fatalf("missing %v, wrong %v, refused but present %v, reported %v, %d refusals not in Health, problems %v",
			p.Missing, p.Wrong, p.Appeared, p.Reported, r.Unreported, r.Problems)
	}
	for _, code := range r.Codes {
		if code != "read_model_unavailable" && code != "log_write_failed" {
			t.Fatalf("a refusal with code %q: not one that says nothing was committed", code)
		}
	}
}

// TestI25_ARefusedCommitLeavesNothingAndAnAcknowledgedOneEverything: on
// filesystems that fill while units of several notes are committed — at
// sizes where the log, the read model's WAL or a snapshot fills the disk
// first — no note of a refused unit is ever found afterwards and every
// note of an acknowledged one is, with its value.
func TestI25_ARefusedCommitLeavesNothingAndAnAcknowledgedOneEverything(t *testing.T) {
	for i, size := range []int64{1 << 20, 2 << 20, 5 << 20} {
		r := runInChild(t, RunSpec{Kind: KindDiskFull, Seed: uint64(i + 7), Size: size})
		t.Logf("%s: acked %d", r.Detail, r.Acked)
		if p := r.Probe; r.Acked == 0 || len(p.Missing)+len(p.Wrong)+len(p.Appeared) > 0 {
			t.Fatalf("%s: missing %v, wrong %v, refused but present %v", r.Detail, p.Missing, p.Wrong, p.Appeared)
		}
	}
}
