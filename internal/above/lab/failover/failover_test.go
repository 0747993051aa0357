// Package failover_test runs replicated mode across processes (I31): a
// 3-node NATS cluster on loopback in the test process, a primary and a
// warm standby as two child processes (this test binary re-executed) on
// their own store directories, syncing to an emulated spreadsheet.
package failover_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/crash"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/sheetcheck"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Environment of a child process.
const (
	envChild    = "HIKOUTEI_FAILOVER_CHILD" // primary | standby
	envDir      = "HIKOUTEI_FAILOVER_DIR"
	envNATS     = "HIKOUTEI_FAILOVER_NATS"
	envEndpoint = "HIKOUTEI_FAILOVER_SHEETS"
)

const storeName = "failover"

// Item is the record the children commit.
type Item struct {
	ID   string `hikoutei:"id,pk"`
	Note string `hikoutei:"note"`
}

func TestMain(m *testing.M) {
	if role := os.Getenv(envChild); role != "" {
		os.Exit(runChild(role))
	}
	os.Exit(m.Run())
}

// child is one store process and the lines it printed.
type child struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	seen  chan struct{} // pinged on every line
	done  chan struct{}
}

func startChild(t *testing.T, role, dir, natsURL, endpoint string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), seen: make(chan struct{}, 1), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), envChild+"="+role, envDir+"="+dir, envNATS+"="+natsURL, envEndpoint+"="+endpoint)
	c.cmd.Stderr = io.Discard
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.lines = append(c.lines, sc.Text())
			c.mu.Unlock()
			select {
			case c.seen <- struct{}{}:
			default:
			}
		}
		_ = c.cmd.Wait()
		close(c.done)
	}()
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); <-c.done })
	return c
}

// snapshot returns the lines printed so far.
func (c *child) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.lines)
}

// waitFor waits until cond holds on the lines printed (checked on every
// new line), failing after limit without one: a correct product reaches
// every condition waited on here; the limit only bounds a broken run.
func (c *child) waitFor(t *testing.T, what string, limit time.Duration, cond func([]string) bool) {
	t.Helper()
	deadline := time.After(limit)
	for !cond(c.snapshot()) {
		select {
		case <-c.seen:
		case <-c.done:
			if !cond(c.snapshot()) {
				t.Fatalf("%s: the child exited first; it printed:\n%s", what, strings.Join(c.snapshot(), "\n"))
			}
		case <-deadline:
			t.Fatalf("%s: not within %s; the child printed:\n%s", what, limit, strings.Join(c.snapshot(), "\n"))
		}
	}
}

func acks(lines []string) []string {
	var out []string
	for _, l := range lines {
		if id, ok := strings.CutPrefix(l, "ACK "); ok {
			out = append(out, id)
		}
	}
	return out
}

func count(prefix string) func([]string) bool {
	return func(lines []string) bool { return slices.Contains(lines, prefix) }
}

func atLeast(n int) func([]string) bool {
	return func(lines []string) bool { return len(acks(lines)) >= n }
}

// TestI31_KillingThePrimaryUnderLoadTheStandbyTakesOverWithEveryAcknowledgedCommit:
// the primary commits steadily; one NATS node is stopped and restarted
// under that load; then the primary is killed with SIGKILL. The standby
// takes over within 20 s (the lease rule allows it 15 s after the last
// heartbeat), holds every commit the primary acknowledged in its log and
// read model, commits itself, and the sheet converges with no row twice.
func TestI31_KillingThePrimaryUnderLoadTheStandbyTakesOverWithEveryAcknowledgedCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two store processes and a 3-node cluster for about 40 s")
	}
	cluster := replicationtest.StartCluster(t, 3)
	sheet := hikouteitest.NewSheet(t)
	primaryDir, standbyDir := filepath.Join(t.TempDir(), storeName), filepath.Join(t.TempDir(), storeName)
	primary := startChild(t, "primary", primaryDir, cluster.URLs(), sheet.URL)
	primary.waitFor(t, "the primary commits", time.Minute, atLeast(20))
	standby := startChild(t, "standby", standbyDir, cluster.URLs(), sheet.URL)
	standby.waitFor(t, "the standby follows", time.Minute, count("STANDBY"))

	node := cluster.StreamLeader(replicationStream()) // the stream leader: a new one is elected under load
	cluster.Stop(node)
	before := len(acks(primary.snapshot()))
	primary.waitFor(t, "commits with one node down", time.Minute, atLeast(before+20))
	cluster.Restart(node)
	primary.waitFor(t, "commits after the node came back", time.Minute, atLeast(len(acks(primary.snapshot()))+20))

	if err := primary.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-primary.done
	killed := time.Now()
	acked := acks(primary.snapshot())
	standby.waitFor(t, "the standby takes over", time.Minute, count("PRIMARY"))
	took := time.Since(killed)
	t.Logf("failover: %s after SIGKILL; %d commits acknowledged by the old primary", took.Round(10*time.Millisecond), len(acked))
	if took > 20*time.Second {
		t.Errorf("the standby took over %s after the kill, want within 20 s", took)
	}
	standby.waitFor(t, "the new primary commits", time.Minute, atLeast(5))
	standby.waitFor(t, "the sheet converges", 2*time.Minute, count("SYNCED"))
	if err := standby.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-standby.done

	all := append(slices.Clone(acked), acks(standby.snapshot())...)
	checkStore(t, standbyDir, all)
	checkSheet(t, sheet, all)
}

func replicationStream() string { return "HIKOUTEI_REPL_" + strings.ToUpper(storeName) }

// checkStore opens the new primary's directory and finds every
// acknowledged item in its read model, and the read model equal to a
// replay of its log.
func checkStore(t *testing.T, dir string, ids []string) {
	t.Helper()
	s, err := hikoutei.Open(t.Context(), dir, hikoutei.Options{HeartbeatInterval: -1}, hikoutei.Entity[Item]("Item"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, id := range ids {
		if _, err := hikoutei.Get[Item](context.Background(), s, id); err != nil {
			t.Errorf("acknowledged item %s missing after the failover: %v", id, err)
		}
	}
}

// checkSheet finds every acknowledged item exactly once on Item_System.
func checkSheet(t *testing.T, sheet *hikouteitest.Sheet, ids []string) {
	t.Helper()
	rows, err := sheet.Person().Displayed("Item_System")
	if err != nil {
		t.Fatal(err)
	}
	if dup := sheetcheck.DuplicateAnchors(rows); len(dup) > 0 {
		t.Errorf("rows shown twice after the failover: %v", dup)
	}
	shown := map[string]bool{}
	for _, r := range rows[1:] {
		if len(r) > 0 {
			shown[r[0]] = true
		}
	}
	for _, id := range ids {
		if !shown[id] {
			t.Errorf("acknowledged item %s is not in the sheet", id)
		}
	}
}

// runChild is a store process: "primary" commits items until killed;
// "standby" follows, says PRIMARY once it took over, commits a few items,
// says SYNCED once the sheet shows everything, and closes on SIGINT.
func runChild(role string) int {
	ctx, stop := signalContext()
	defer stop()
	s, err := openChild(ctx, role)
	if err != nil {
		fmt.Println("ERR open: " + err.Error())
		return 1
	}
	defer s.Close()
	if role == "standby" {
		return standbyLoop(ctx, s)
	}
	printEpoch(s)
	commitLoop(ctx, s, "p", 0)
	<-ctx.Done()
	return 0
}

// printEpoch says the lease epoch the store holds.
func printEpoch(s *hikoutei.Store) {
	if r := s.Health().Replication; r != nil {
		fmt.Printf("EPOCH %d\n", r.Epoch)
	}
}

func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signalNotify(ch)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

func openChild(ctx context.Context, role string) (*hikoutei.Store, error) {
	sync, err := syncOptions(ctx)
	if err != nil {
		return nil, err
	}
	opts := hikoutei.Options{Operation: "failover-" + role, Sync: sync,
		Replication: &hikoutei.ReplicationOptions{URL: os.Getenv(envNATS), Store: storeName, Standby: role == "standby"}}
	return hikoutei.Open(ctx, os.Getenv(envDir), opts, hikoutei.Entity[Item]("Item"))
}

// commitLoop commits items one at a time, printing ACK after each
// acknowledged commit, until ctx ends or max (> 0) items.
func commitLoop(ctx context.Context, s *hikoutei.Store, prefix string, max int) {
	for i := 0; max == 0 || i < max; i++ {
		if ctx.Err() != nil {
			return
		}
		id := fmt.Sprintf("%s%05d", prefix, i)
		u := s.Begin()
		if err := u.Persist(&Item{ID: id, Note: "n"}); err != nil {
			fmt.Println("ERR persist: " + err.Error())
			return
		}
		if _, err := u.Commit(ctx); err != nil {
			fmt.Println("ERR commit: " + err.Error())
			if r := s.Health().Replication; r != nil && r.Role == "fenced" {
				fmt.Println("FENCED")
				return
			}
			continue
		}
		fmt.Println("ACK " + id)
	}
}

func standbyLoop(ctx context.Context, s *hikoutei.Store) int {
	fmt.Println("STANDBY")
	if !waitRole(ctx, s, "primary") {
		return 0
	}
	fmt.Println("PRIMARY")
	printEpoch(s)
	commitLoop(ctx, s, "s", 5)
	if waitSynced(ctx, s) {
		fmt.Println("SYNCED")
	}
	<-ctx.Done()
	return 0
}

func waitRole(ctx context.Context, s *hikoutei.Store, role string) bool {
	for {
		if r := s.Health().Replication; r != nil && string(r.Role) == role {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitSynced waits until the outbox has nothing unsettled and sync
// health is ok.
func waitSynced(ctx context.Context, s *hikoutei.Store) bool {
	for {
		h := s.Health()
		if h.Local == nil && h.Sync == nil && h.SyncHealth != nil && h.SyncHealth.State == hikoutei.SyncOK && h.SyncHealth.Pending == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func signalNotify(ch chan<- os.Signal) { signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM) }

// syncOptions syncs a child's store to the emulated spreadsheet: quick
// cadences, no pacing (the children stand for two hosts' services).
func syncOptions(ctx context.Context) (*hikoutei.SyncOptions, error) {
	prov, err := crash.NewProvider(ctx, os.Getenv(envEndpoint), nil)
	if err != nil {
		return nil, err
	}
	return &hikoutei.SyncOptions{SpreadsheetID: hikouteitest.SpreadsheetID, Provider: prov, MaxBatch: 200,
		Interval: 50 * time.Millisecond, ProbeDelay: 200 * time.Millisecond, ReconcileInterval: time.Second,
		PollingInterval: 500 * time.Millisecond, FullScanInterval: 2 * time.Second}, nil
}

// epochOf is the epoch a child printed.
func epochOf(t *testing.T, c *child) uint64 {
	t.Helper()
	for _, l := range c.snapshot() {
		var n uint64
		if _, err := fmt.Sscanf(l, "EPOCH %d", &n); err == nil {
			return n
		}
	}
	t.Fatalf("the child printed no epoch:\n%s", strings.Join(c.snapshot(), "\n"))
	return 0
}

// receiptsOf counts the receipt rows written under epoch.
func receiptsOf(t *testing.T, sheet *hikouteitest.Sheet, epoch uint64) int {
	t.Helper()
	rows, err := sheet.Person().Displayed(layout.ReceiptsTab)
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], layout.ReceiptEpoch)
	n := 0
	for _, r := range rows[1:] {
		if col >= 0 && col < len(r) && r[col] == strconv.FormatUint(epoch, 10) {
			n++
		}
	}
	return n
}

// TestI31_APrimaryPausedPastItsLeaseIsFencedWhenItResumes: SIGSTOP the
// primary; the standby takes over and commits; SIGCONT the old primary:
// it reports that it was fenced, every commit it acknowledged precedes
// the takeover in the new primary's log (none lands after it), and no
// write of its epoch reaches the spreadsheet after it resumed.
func TestI31_APrimaryPausedPastItsLeaseIsFencedWhenItResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two store processes and a 3-node cluster for about 40 s")
	}
	cluster := replicationtest.StartCluster(t, 3)
	sheet := hikouteitest.NewSheet(t)
	primaryDir, standbyDir := filepath.Join(t.TempDir(), storeName), filepath.Join(t.TempDir(), storeName)
	primary := startChild(t, "primary", primaryDir, cluster.URLs(), sheet.URL)
	primary.waitFor(t, "the primary commits", time.Minute, atLeast(20))
	standby := startChild(t, "standby", standbyDir, cluster.URLs(), sheet.URL)
	standby.waitFor(t, "the standby follows", time.Minute, count("STANDBY"))
	oldEpoch := epochOf(t, primary)

	if err := primary.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	standby.waitFor(t, "the standby takes over", time.Minute, count("PRIMARY"))
	standby.waitFor(t, "the new primary commits", time.Minute, atLeast(5))
	newEpoch := epochOf(t, standby)
	if newEpoch <= oldEpoch {
		t.Fatalf("takeover epoch %d, the paused primary's %d", newEpoch, oldEpoch)
	}
	oldReceipts := receiptsOf(t, sheet, oldEpoch)
	if err := primary.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	primary.waitFor(t, "the old primary reports it was fenced", time.Minute, count("FENCED"))
	lines := primary.snapshot()
	t.Logf("old primary epoch %d (%d receipts of it), new %d; it ended with %q", oldEpoch, oldReceipts, newEpoch, lines[len(lines)-2])
	if got := receiptsOf(t, sheet, oldEpoch); got != oldReceipts {
		t.Errorf("%d writes of the old epoch reached the sheet after it resumed", got-oldReceipts)
	}
	standby.waitFor(t, "the sheet converges", 2*time.Minute, count("SYNCED"))
	if err := standby.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-standby.done
	checkBeforeTakeover(t, standbyDir, newEpoch, acks(primary.snapshot()))
}

// checkBeforeTakeover finds every id committed (entity.persisted) before
// the lease event of epoch in dir's log.
func checkBeforeTakeover(t *testing.T, dir string, epoch uint64, ids []string) {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	at, takeover := map[string]uint64{}, uint64(0)
	err = l.ReadFrom(1, func(e events.Event) error {
		switch p := e.Payload.(type) {
		case events.EntityPersisted:
			at[p.ID] = e.Seq
		case events.LeaseAcquired:
			if p.Epoch == epoch {
				takeover = e.Seq
			}
		case events.LeaseTakenOver:
			if p.Epoch == epoch {
				takeover = e.Seq
			}
		}
		return nil
	})
	if err != nil || takeover == 0 {
		t.Fatalf("reading the new primary's log: %v (takeover at %d)", err, takeover)
	}
	for _, id := range ids {
		switch seq, ok := at[id]; {
		case !ok:
			t.Errorf("acknowledged item %s missing from the new primary's log", id)
		case seq > takeover:
			t.Errorf("the old primary's item %s landed at %d, after the takeover at %d", id, seq, takeover)
		}
	}
}
