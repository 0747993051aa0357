package hikoutei

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// consumerEnv makes this test binary a subscription consumer (TestMain).
const consumerEnv = "HIKOUTEI_TEST_SUBSCRIPTION_CONSUMER"

// consumer is what a consumer child does: open the store on a clock an
// hour past the previous child's (so it takes the dead child's lease at
// once), commit Produce airports while the callback subscription "audit"
// (window Window) appends each seq it is handed to Deliveries and the
// transactional "ledger" (batches of Batch) inserts it into app_ledger;
// once both reach the head after the last commit, print "head N" and exit.
type consumer struct {
	Dir        string
	Round      int
	Produce    int
	Window     int
	Batch      int
	Deliveries string
}

const (
	killWindow = 7
	killBatch  = 5
)

func TestMain(m *testing.M) {
	if cfg := os.Getenv(adoptChildEnv); cfg != "" {
		if err := runAdoptChild(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "adopt child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if cfg := os.Getenv(layoutChildEnv); cfg != "" {
		if err := runLayoutChild(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "layout child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	if cfg := os.Getenv(consumerEnv); cfg != "" {
		if err := runConsumer(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "consumer:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runConsumer(cfg string) error {
	var c consumer
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		return err
	}
	clock := events.NewManualClock(t0.Add(time.Duration(c.Round) * time.Hour))
	s, err := Open(context.Background(), c.Dir, Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true}, Entity[Airport]("Airport"))
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := os.OpenFile(c.Deliveries, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	return c.run(s, out)
}

// run commits and consumes until both subscriptions reached the head the
// last commit left.
func (c consumer) run(s *Store, out *os.File) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var target atomic.Uint64 // 0 until the producer is done
	var seen [2]atomic.Uint64
	reached := make(chan struct{}, 2)
	note := func(i int, seq uint64) {
		seen[i].Store(seq)
		if t := target.Load(); t != 0 && seq >= t {
			reached <- struct{}{}
		}
	}
	errc := make(chan error, 2)
	go func() {
		errc <- s.Subscribe(ctx, "audit", func(_ context.Context, ev Event) error {
			if _, err := fmt.Fprintf(out, "%d\n", ev.Seq); err != nil {
				return err
			}
			fmt.Fprintf(os.Stdout, "a %d\n", ev.Seq)
			note(0, ev.Seq)
			return nil
		}, CheckpointEvery(c.Window))
	}()
	go func() {
		errc <- s.SubscribeTx(ctx, "ledger", func(ctx context.Context, tx *sql.Tx, ev Event) error {
			if _, err := tx.ExecContext(ctx, "INSERT INTO app_ledger(seq) VALUES (?)", ev.Seq); err != nil {
				return err
			}
			fmt.Fprintf(os.Stdout, "l %d\n", ev.Seq)
			note(1, ev.Seq)
			return nil
		}, TxBatch(c.Batch))
	}()
	for i := range c.Produce {
		u := s.Begin()
		if err := u.Persist(airport(c.Round*1000 + i)); err != nil {
			return err
		}
		if _, err := u.Commit(ctx); err != nil {
			return err
		}
	}
	h, err := s.e.Log().Head()
	if err != nil {
		return err
	}
	target.Store(h)
	for i := range seen {
		if seen[i].Load() >= h {
			reached <- struct{}{}
		}
	}
	for range 2 {
		select {
		case <-reached:
		case err := <-errc:
			return err
		}
	}
	cancel()
	for range 2 {
		if err := <-errc; err != nil && ctx.Err() == nil {
			return err
		}
	}
	fmt.Fprintf(os.Stdout, "head %d\n", h)
	return nil
}

// roundResult is what one consumer run left.
type roundResult struct {
	delivered []uint64 // seqs "audit" handed to the handler, in order
	killed    bool
	cp        uint64 // "audit"'s durable checkpoint after the run
	head      uint64 // the head the run reported (clean end only)
}

// TestI34_KilledConsumerResumesWithoutLosingAnEvent kills a consumer
// process with SIGKILL at seeded random points, many times, while it
// commits and consumes: each restart resumes "audit" exactly after its
// durable checkpoint (no event skipped), every event is delivered at
// least once, an event is delivered again only when it lay within the
// window (checkpoint, checkpoint+CheckpointEvery] at the kill, and the
// transactional "ledger" holds every event exactly once.
func TestI34_KilledConsumerResumesWithoutLosingAnEvent(t *testing.T) {
	t.Parallel()
	const kills = 12
	dir := t.TempDir()
	prepareLedger(t, dir)
	rng := rand.New(rand.NewPCG(34, 21))
	var rounds []roundResult
	for r := 1; r <= kills+1; r++ {
		killAfter := 1 + rng.IntN(400)
		if r == kills+1 {
			killAfter = -1 // the last run ends cleanly
		}
		rounds = append(rounds, runRound(t, dir, r, killAfter))
	}
	checkRounds(t, rounds)
	checkLedger(t, dir, rounds[len(rounds)-1].head)
}

// prepareLedger creates the store and the consumer's table.
func prepareLedger(t *testing.T, dir string) {
	s := openStore(t, dir, func(o *Options) { o.NoAdmin = true })
	db, err := sql.Open("sqlite", "file:"+s.ReadModelPath())
	mustT(t, err)
	_, err = db.Exec("CREATE TABLE app_ledger (seq INTEGER NOT NULL)")
	mustT(t, err)
	mustT(t, db.Close())
	mustT(t, s.Close())
}

// runRound runs one consumer child, killing it after killAfter lines of
// its output (never when negative), and reads what it left.
func runRound(t *testing.T, dir string, round, killAfter int) roundResult {
	t.Helper()
	deliveries := filepath.Join(dir, fmt.Sprintf("deliveries-%02d", round))
	cfg, _ := json.Marshal(consumer{Dir: dir, Round: round, Produce: 60, Window: killWindow, Batch: killBatch, Deliveries: deliveries})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), consumerEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	mustT(t, err)
	mustT(t, cmd.Start())
	res := roundResult{}
	lines := bufio.NewScanner(stdout)
	for n := 1; lines.Scan(); n++ {
		if h, ok := strings.CutPrefix(lines.Text(), "head "); ok {
			res.head, _ = strconv.ParseUint(h, 10, 64)
		}
		if n == killAfter {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
				t.Fatal(err)
			}
			res.killed = true
		}
	}
	// The child may have ended on its own just before the signal (its
	// last line was the one to kill after): that round is a clean end.
	err = cmd.Wait()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	res.killed = res.killed && ws.Signaled()
	if err != nil && !res.killed {
		t.Fatalf("round %d: %v", round, err)
	}
	res.delivered = readSeqs(t, deliveries)
	res.cp = auditCheckpoint(t, dir)
	return res
}

func readSeqs(t *testing.T, path string) []uint64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	mustT(t, err)
	var out []uint64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseUint(f, 10, 64)
		mustT(t, err)
		out = append(out, v)
	}
	return out
}

// auditCheckpoint reads "audit"'s durable checkpoint from read.sqlite.
func auditCheckpoint(t *testing.T, dir string) uint64 {
	t.Helper()
	conn, err := sqlite.OpenConn(filepath.Join(dir, ReadModelFile), sqlite.OpenReadOnly)
	mustT(t, err)
	defer conn.Close()
	rows, err := projector.ListSubscriptions(conn)
	mustT(t, err)
	for _, r := range rows {
		if r.Name == "audit" {
			return r.Checkpoint
		}
	}
	return 0
}

// checkRounds checks the deliveries of "audit" run by run: each run
// starts right after the previous run's durable checkpoint and delivers
// consecutive seqs; a killed run delivered at most the window past its
// checkpoint; together they cover 1..head.
func checkRounds(t *testing.T, rounds []roundResult) {
	t.Helper()
	var prevCP uint64
	redelivered := 0
	for i, r := range rounds {
		for j, seq := range r.delivered {
			if want := prevCP + 1 + uint64(j); seq != want {
				t.Fatalf("run %d: delivery %d is seq %d, want %d (the checkpoint before the run was %d)", i+1, j, seq, want, prevCP)
			}
		}
		last := prevCP
		if n := len(r.delivered); n > 0 {
			last = r.delivered[n-1]
		}
		if r.cp < prevCP || r.cp > last || last-r.cp > killWindow {
			t.Fatalf("run %d: checkpoint %d after delivering up to %d (previous checkpoint %d): outside the window of %d", i+1, r.cp, last, prevCP, killWindow)
		}
		redelivered += int(last - r.cp)
		prevCP = r.cp
	}
	end := rounds[len(rounds)-1]
	if end.killed || end.head == 0 || end.cp != end.head {
		t.Fatalf("the last run: %+v, want a clean end with the checkpoint at the head", end)
	}
	t.Logf("%d runs, %d events, %d delivered twice (all within their window)", len(rounds), end.head, redelivered)
}

// checkLedger checks that app_ledger holds 1..head, each once.
func checkLedger(t *testing.T, dir string, head uint64) {
	t.Helper()
	s := openStore(t, dir, func(o *Options) { o.NoAdmin = true; o.Clock = events.NewManualClock(t0.Add(1000 * time.Hour)) })
	defer s.Close()
	seqs := ledgerSeqs(t, s)
	if uint64(len(seqs)) != head {
		t.Fatalf("app_ledger holds %d rows, want %d", len(seqs), head)
	}
	for i, seq := range seqs {
		if seq != uint64(i+1) {
			t.Fatalf("app_ledger row %d is seq %d, want %d", i, seq, i+1)
		}
	}
}
