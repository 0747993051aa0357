package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// TestDemoSmallRun is the smaller demo run `make test` includes: 300
// airports end to end without Google's latency model; every act reaches
// one of its correct outcomes. Its progress, written to a buffer (not a
// terminal), is plain lines without a carriage return, and each phase
// ends with exactly one "<phase>: done" line.
func TestDemoSmallRun(t *testing.T) {
	var out, progress bytes.Buffer
	dir := t.TempDir()
	sum, err := Run(context.Background(), Config{Dir: dir, Data: "../../../testdata/data/airports.json", Rows: 300, Out: &out,
		Progress: &progress})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if p := progress.String(); strings.Contains(p, "\r") || !strings.Contains(p, "commit: done (300)") || !strings.Contains(p, "sync: done") {
		t.Fatalf("progress off a terminal: %q", p)
	}
	if phases := repeatedPhases(progress.String()); len(phases) > 0 {
		t.Fatalf("phases that ended more than once: %v\n%s", phases, progress.String())
	}
	t.Log(out.String())
	if sum.Rows != 300 || sum.SheetRows != 300 || sum.Mismatches != 0 || sum.Quarantined < 2 || len(sum.Outcomes) != 7 ||
		sum.ResolvedInSheet != 1 || sum.Outcomes[6].Result != ResultResolvedUseSheet || sum.Erased != 1 {
		t.Fatalf("summary %+v\n%s", sum, out.String())
	}
	if sum.Outcomes[1].Result == ResultConflict && (sum.Conflicts != 2 || sum.Resolved != 2) {
		t.Fatalf("a conflict opened but conflicts/resolved are %d/%d", sum.Conflicts, sum.Resolved)
	}
	for _, o := range sum.Outcomes {
		if !strings.Contains(out.String(), "  "+o.Act+": "+string(o.Result)+"\n") {
			t.Fatalf("outcome %+v not reported\n%s", o, out.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-1]; last != sum.Line() || !strings.HasPrefix(last, "summary: rows=300 sheet_rows=300 mismatches=0 ") {
		t.Fatalf("last line %q", last)
	}
	verifyDemoLog(t, dir)
	checkQuarantineAsStatusCountsIt(t, sum)
	checkQuarantineCountsAgreeWithTheList(t, sum, out.String())
}

// checkQuarantineCountsAgreeWithTheList: the summary's quarantined_acts
// is the number of acts the outcomes list shows as quarantined, and the
// summary names both counts, so a reader of "3 quarantined acts" and
// "4 quarantined rows" is not left guessing.
func checkQuarantineCountsAgreeWithTheList(t *testing.T, sum Summary, out string) {
	t.Helper()
	listed := strings.Count(out, ": "+string(ResultQuarantined)+"\n")
	want := fmt.Sprintf(" quarantined_acts=%d quarantined_rows=%d ", listed, sum.Quarantined)
	if listed == 0 || sum.QuarantinedActs != listed || !strings.Contains(sum.Line(), want) {
		t.Fatalf("the list shows %d quarantined acts; summary %q, want %q", listed, sum.Line(), want)
	}
	table := fmt.Sprintf("%d acts above, %d rows held for review", listed, sum.Quarantined)
	if !strings.Contains(out, table) {
		t.Fatalf("the report does not say %q:\n%s", table, out)
	}
}

// checkQuarantineAsStatusCountsIt: the summary's quarantined is what
// `hikoutei status` shows for the store (active quarantine records: a
// duplicated row is two), not a count of its own.
func checkQuarantineAsStatusCountsIt(t *testing.T, sum Summary) {
	t.Helper()
	conn, err := sqlite.OpenConn(sum.ReadModel, sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	status := 0
	err = sqlitex.Execute(conn, "SELECT count(*) FROM hk_quarantine WHERE active = 1", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { status = s.ColumnInt(0); return nil }})
	if err != nil || status != sum.Quarantined {
		t.Fatalf("the summary says quarantined=%d, status shows %d (%v)", sum.Quarantined, status, err)
	}
}

// verifyDemoLog: the untouched log a demo run leaves verifies from the
// genesis value to its head, every record chained.
func verifyDemoLog(t *testing.T, dir string) {
	t.Helper()
	rep, err := hikoutei.VerifyDir(context.Background(), dir, hikoutei.VerifyOptions{})
	if err != nil {
		t.Fatalf("the demo's log does not verify: %v", err)
	}
	if rep.FirstChained != 1 || rep.Records != rep.Head || len(rep.Restarts) != 0 || rep.HeadHash.IsZero() {
		t.Fatalf("the demo's log verified as %+v, want every record chained from seq 1", rep)
	}
}

// TestDemoStallFailsWithTheStoreAndTheCommandsToInspectIt: a wait that
// observes no progress fails after Config.Stall (not a fixed deadline),
// and the failure names the kept store and how to inspect it.
func TestDemoStallFailsWithTheStoreAndTheCommandsToInspectIt(t *testing.T) {
	var out bytes.Buffer
	dir := t.TempDir()
	e, err := setup(context.Background(), Config{Dir: dir, Data: "../../../testdata/data/airports.json", Rows: 5, Out: &out,
		Stall: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	checks := 0
	err = e.waitFor(context.Background(), "something that never happens", false, func() (bool, string, error) {
		checks++
		return false, "unchanged", nil
	})
	if !errors.Is(err, ErrStalled) || checks < 2 {
		t.Fatalf("waitFor = %v after %d checks, want %v", err, checks, ErrStalled)
	}
	e.close()
	e.failed(err)
	for _, want := range []string{"demo failed: demo_stalled", "the store is kept at " + dir, "hikoutei status --dir " + dir,
		"hikoutei audit --dir " + dir} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("failure output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDemoWaitsAsLongAsProgressContinues: a wait whose observed state
// keeps changing is not failed by the stall period, however long it takes.
func TestDemoWaitsAsLongAsProgressContinues(t *testing.T) {
	e, err := setup(context.Background(), Config{Dir: t.TempDir(), Data: "../../../testdata/data/airports.json", Rows: 5,
		Out: &bytes.Buffer{}, Stall: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	start, checks := time.Now(), 0
	err = e.waitFor(context.Background(), "a slow but moving condition", false, func() (bool, string, error) {
		checks++
		return time.Since(start) > 3*e.cfg.Stall, strings.Repeat("x", checks), nil
	})
	if err != nil {
		t.Fatalf("a moving wait failed: %v", err)
	}
}

// repeatedPhases lists the phases whose "<phase>: done" line appears more
// than once in progress output.
func repeatedPhases(progress string) []string {
	seen := map[string]int{}
	var out []string
	for _, line := range strings.Split(progress, "\n") {
		phase, _, ok := strings.Cut(line, ": done")
		if !ok {
			continue
		}
		if seen[phase]++; seen[phase] == 2 {
			out = append(out, phase)
		}
	}
	return out
}

// TestRepeatedPhasesFindsAPhaseThatEndedTwice: the check on the demo's
// progress catches the output the demo used to print ("sync: done"
// twice) and passes the fixed one.
func TestRepeatedPhasesFindsAPhaseThatEndedTwice(t *testing.T) {
	before := "commit: done (300) in 93ms\nsync: done (300) in 222ms\nsync: done (300) in 404ms\n"
	after := "commit: done (300) in 93ms\nsync: done (300) in 222ms\nsettle: done (4) in 180ms\n"
	if got := repeatedPhases(before); len(got) != 1 || got[0] != "sync" {
		t.Fatalf("before the fix: %v", got)
	}
	if got := repeatedPhases(after); len(got) != 0 {
		t.Fatalf("after the fix: %v", got)
	}
}
