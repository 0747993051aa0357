package storagefault

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// childDirEnv carries the directory a re-executed test child works in.
const childDirEnv = "HIKOUTEI_STORAGEFAULT_TEST_DIR"

const resultPrefix = "storagefault-result: "

// inChild re-executes the running test in a child process on a small
// filesystem and decodes what it printed; in the child it runs fn and
// prints its result.
func inChild[R any](t *testing.T, fn func(dir string) (R, error)) R {
	t.Helper()
	var r R
	if dir := os.Getenv(childDirEnv); dir != "" {
		got, err := fn(dir)
		if err != nil {
			t.Fatal(err)
		}
		line, _ := json.Marshal(got)
		fmt.Println(resultPrefix + string(line))
		return r
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v")
	cmd.Env = append(os.Environ(), childDirEnv+"="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	medium, err := StartIsolated(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child (%s): %v\n%s", medium, err, out.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), resultPrefix); ok {
			if err := json.Unmarshal([]byte(rest), &r); err != nil {
				t.Fatal(err)
			}
			return r
		}
	}
	t.Fatalf("child printed no result:\n%s", out.String())
	return r
}

// TestRepro1_DiskFullNeverLosesAcknowledgedCommits: on a 3 MB filesystem
// commits are refused once it is full — each refusal an error that says
// nothing was committed, reported by Health — and after space is freed
// the same store commits again; reopened, every commit answered durable
// is there and doctor finds nothing wrong.
func TestRepro1_DiskFullNeverLosesAcknowledgedCommits(t *testing.T) {
	r := inChild(t, func(dir string) (DiskFullResult, error) { return RunDiskFull(dir, 3<<20, 1) })
	if os.Getenv(childDirEnv) != "" {
		return
	}
	t.Logf("medium %s: acked %d, refused %d %v", r.Medium, r.Acked, r.Refused, r.Codes)
	if r.Acked == 0 || r.Refused != maxRefused {
		t.Fatalf("the disk never filled: %+v", r)
	}
	if len(r.Lost) > 0 || r.Unreported > 0 || len(r.Doctor) > 0 || r.Codes["other"] > 0 {
		t.Fatalf("lost %d acknowledged commits %v; %d refusals not in health; doctor %v; codes %v", len(r.Lost), r.Lost, r.Unreported, r.Doctor, r.Codes)
	}
}

// TestI25_ARefusedCommitLeavesNothingAndAnAcknowledgedOneEverything: on a
// filesystem that fills while units of several entities are committed,
// no entity of a refused unit is ever found afterwards and every entity
// of an acknowledged one is, at sizes where the log, the read model's WAL
// or a snapshot fills the disk first.
func TestI25_ARefusedCommitLeavesNothingAndAnAcknowledgedOneEverything(t *testing.T) {
	type results []DiskFullResult
	rs := inChild(t, func(dir string) (results, error) {
		var out results
		for i, size := range []int64{1 << 20, 2 << 20, 5 << 20} {
			sub := filepath.Join(dir, strconv.Itoa(i))
			if err := os.Mkdir(sub, 0o700); err != nil {
				return out, err
			}
			r, err := RunDiskFull(sub, size, uint64(i+7))
			if err != nil {
				return out, err
			}
			out = append(out, r)
		}
		return out, nil
	})
	for _, r := range rs {
		t.Logf("medium %s: acked %d, refused %d %v", r.Medium, r.Acked, r.Refused, r.Codes)
		if r.Acked == 0 || r.Refused != maxRefused || len(r.Lost) > 0 || len(r.Appeared) > 0 || r.Codes["other"] > 0 {
			t.Fatalf("lost %v, refused but present %v, codes %v", r.Lost, r.Appeared, r.Codes)
		}
	}
}
