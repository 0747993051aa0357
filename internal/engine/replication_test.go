package engine_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/replication"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// replicated is a replicated store's test fixture: a 3-node loopback
// cluster, one manual clock shared by every store of the test, and a
// reader of the stream.
type replicated struct {
	t       *testing.T
	cluster *replicationtest.Cluster
	clock   *events.ManualClock
	stream  *replication.Log
	// appendTimeout bounds a replicated append (2 s unless a test needs
	// the cluster to settle after restarts; see the uncertain commit test).
	appendTimeout time.Duration
}

const replStore = "shop"

func newReplicated(t *testing.T) *replicated {
	t.Helper()
	c := replicationtest.StartCluster(t, 3)
	x := &replicated{t: t, cluster: c, clock: events.NewManualClock(t0), appendTimeout: 2 * time.Second}
	var err error
	x.stream, err = replication.Open(ctxWithin(t, replicationtest.Deadline), c.Connect(), replication.Config{Store: replStore})
	mustT(t, err)
	c.WaitStreamCurrent(x.stream.Stream())
	return x
}

func ctxWithin(t testing.TB, d time.Duration) context.Context {
	c, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return c
}

// options are a replicated store's options: no heartbeat of either lease
// (the test drives the clock), no waiting for a held lease.
func (x *replicated) options(standby bool) hikoutei.Options {
	return hikoutei.Options{Clock: x.clock, HeartbeatInterval: -1, AcquireWait: -1, Logger: quiet, NoAdmin: true,
		Replication: &hikoutei.ReplicationOptions{URL: x.cluster.URLs(), Store: replStore, Standby: standby, AppendTimeout: x.appendTimeout}}
}

func (x *replicated) open(dir string, standby bool) (*hikoutei.Store, error) {
	s, err := hikoutei.Open(context.Background(), dir, x.options(standby), airports...)
	if err == nil {
		x.t.Cleanup(func() { s.Close() })
	}
	return s, err
}

func (x *replicated) mustOpen(dir string, standby bool) *hikoutei.Store {
	x.t.Helper()
	s, err := x.open(dir, standby)
	mustT(x.t, err)
	return s
}

func (x *replicated) head() uint64 {
	x.t.Helper()
	h, err := x.stream.Head(ctxWithin(x.t, replicationtest.Deadline))
	mustT(x.t, err)
	return h
}

// streamStreams returns how many records of each log stream the
// replicated stream holds.
func (x *replicated) streamStreams() map[string]int {
	x.t.Helper()
	n := map[string]int{}
	var seq uint64
	err := x.stream.ReadFrom(ctxWithin(x.t, replicationtest.Deadline), 1, func(c replication.Commit) error {
		for _, rec := range c.Records {
			seq++
			ev, err := events.DecodeRecord(seq, rec)
			if err != nil {
				return err
			}
			n[ev.Stream]++
		}
		return nil
	})
	mustT(x.t, err)
	return n
}

// streamFollowers are the indexes of the nodes that do not lead the
// store's stream.
func (x *replicated) streamFollowers() []int {
	x.t.Helper()
	leader := x.cluster.StreamLeader(x.stream.Stream())
	var out []int
	for i := range x.cluster.Nodes {
		if i != leader {
			out = append(out, i)
		}
	}
	if leader < 0 || len(out) != 2 {
		x.t.Fatalf("stream leader %d of %d nodes", leader, len(x.cluster.Nodes))
	}
	return out
}

func replicaHead(t testing.TB, s *hikoutei.Store) uint64 {
	t.Helper()
	h, err := engine.Of(s).Log().ReplicaHead()
	mustT(t, err)
	return h
}

func airport(id string) Airport { return Airport{ID: id, Name: "Airport " + id} }

// The tests below stop and restart cluster nodes on a clock: they run one
// at a time (not t.Parallel), as a parallel run starved them once in CI.

func TestI31_ACommitIsAcknowledgedOnlyAfterTheStreamStoredIt(t *testing.T) {
	x := newReplicated(t)
	p := x.mustOpen(t.TempDir(), false)
	for i, id := range []string{"LAX", "SFO", "JFK"} {
		before := x.head()
		a := airport(id)
		commit(t, p, &a)
		if got := x.head(); got != before+1 || replicaHead(t, p) != got {
			t.Fatalf("commit %d: stream head %d → %d, store's replica head %d; want one more commit, the same", i, before, got, replicaHead(t, p))
		}
	}
	if got := x.streamStreams()[events.EntityStream("Airport", "JFK")]; got != 1 {
		t.Fatalf("the stream holds %d records of the last acknowledged entity, want 1", got)
	}
	// Without a quorum the stream cannot answer: the commit fails and
	// nothing of it is committed locally.
	logHead, _ := engine.Of(p).Log().Head()
	x.cluster.Stop(1)
	x.cluster.Stop(2)
	a := airport("ORD")
	u := p.Begin()
	mustT(t, u.Persist(&a))
	_, err := u.Commit(ctx)
	if !errors.Is(err, hikoutei.ErrLogCommitUncertain) || !errors.Is(err, events.ErrReplicaUncertain) {
		t.Fatalf("commit without a quorum = %v, want log_commit_uncertain (replication_uncertain)", err)
	}
	if h, _ := engine.Of(p).Log().Head(); h != logHead {
		t.Fatalf("log head moved from %d to %d without the stream's acknowledgement", logHead, h)
	}
	if _, err := hikoutei.Get[Airport](ctx, p, "ORD"); !errors.Is(err, hikoutei.ErrNotFound) {
		t.Fatalf("the unacknowledged commit is readable: %v", err)
	}
	if !errors.Is(p.Health().Local, hikoutei.ErrLogCommitUncertain) {
		t.Fatalf("health local = %v, want log_commit_uncertain", p.Health().Local)
	}
}

func TestI31_AnUncertainCommitIsSettledFromTheStreamWhenTheStoreReopens(t *testing.T) {
	x := newReplicated(t)
	dir := t.TempDir()
	p := x.mustOpen(dir, false)
	a := airport("LAX")
	commit(t, p, &a)
	// The stream's leader stays up without a quorum: it takes the next
	// sequence for the commit (its last sequence moves on) but cannot
	// store it, so the reopened store meets a sequence taken but not yet
	// readable, every run (stopping any two nodes left that to chance).
	followers := x.streamFollowers()
	x.cluster.Stop(followers[0])
	x.cluster.Stop(followers[1])
	u := p.Begin()
	b := airport("ORD")
	mustT(t, u.Persist(&b))
	if _, err := u.Commit(ctx); !errors.Is(err, hikoutei.ErrLogCommitUncertain) {
		t.Fatalf("commit without a quorum = %v, want log_commit_uncertain", err)
	}
	x.cluster.Restart(followers[0])
	x.cluster.Restart(followers[1])
	x.cluster.WaitStreamCurrent(x.stream.Stream())
	x.cluster.WaitStreamCurrent("KV_" + replication.LeaseBucket)
	x.cluster.WaitStreamCurrent(replication.KeyStreamName(replStore)) // the reopened store opens its key stream too
	mustT(t, p.Close())
	// The stream may still be settling the commit proposed without a
	// quorum (its last sequence taken, the message not yet readable): the
	// reopened store waits as long as a production store would.
	x.appendTimeout = replicationtest.Deadline
	p = x.mustOpen(dir, false)
	head := x.head()
	if got := replicaHead(t, p); got != head {
		t.Fatalf("reopened store holds stream commits to %d, the stream has %d", got, head)
	}
	_, err := hikoutei.Get[Airport](ctx, p, "ORD")
	inStream := x.streamStreams()[events.EntityStream("Airport", "ORD")] == 1
	if inStream != (err == nil) {
		t.Fatalf("the uncertain commit is in the stream: %v; in the reopened store: %v", inStream, err)
	}
	c := airport("JFK")
	commit(t, p, &c)
}

func TestI31_ASecondPrimaryIsRefusedWhileTheLeaseIsLiveAndFencesTheFirstWhenItTakesOver(t *testing.T) {
	x := newReplicated(t)
	first := x.mustOpen(t.TempDir(), false)
	lax := airport("LAX")
	commit(t, first, &lax)
	secondDir := t.TempDir()
	_, err := x.open(secondDir, false)
	if !errors.Is(err, hikoutei.ErrLeaseHeld) || !strings.Contains(err.Error(), "held by") {
		t.Fatalf("second primary while the first's lease is live = %v, want lease_held naming the holder", err)
	}
	x.clock.Advance(events.StaleHeartbeatAfter + time.Second) // the first stopped heartbeating
	second := x.mustOpen(secondDir, false)
	e1, e2 := first.Health().Replication.Epoch, second.Health().Replication.Epoch
	if e2 <= e1 {
		t.Fatalf("takeover epoch %d, deposed epoch %d: want higher", e2, e1)
	}
	if _, err := hikoutei.Get[Airport](ctx, second, "LAX"); err != nil {
		t.Fatalf("the new primary lacks an acknowledged commit: %v", err)
	}
	head := x.head()
	sfo := airport("SFO")
	u := first.Begin()
	mustT(t, u.Persist(&sfo))
	if _, err := u.Commit(ctx); !errors.Is(err, hikoutei.ErrReplicationFenced) {
		t.Fatalf("deposed primary's commit = %v, want replication_fenced", err)
	}
	if x.head() != head || x.streamStreams()[events.EntityStream("Airport", "SFO")] != 0 {
		t.Fatalf("the deposed primary's commit reached the stream")
	}
	h := first.Health()
	if !errors.Is(h.Local, hikoutei.ErrReplicationFenced) || h.Replication.Role != hikoutei.RoleFenced {
		t.Fatalf("deposed health = %v (%v), want replication_fenced", h.Local, h.Replication.Role)
	}
	select {
	case <-engine.Of(first).Ended():
	default:
		t.Fatal("the deposed primary did not end")
	}
	jfk := airport("JFK")
	commit(t, second, &jfk)
}

func TestI31_AStandbyFollowsThePrimaryAndTakesOverWithEveryAcknowledgedCommit(t *testing.T) {
	x := newReplicated(t)
	primary := x.mustOpen(t.TempDir(), false)
	first := airport("LAX")
	commit(t, primary, &first)
	standby := x.mustOpen(t.TempDir(), true)
	if h := standby.Health(); !errors.Is(h.Local, hikoutei.ErrStandby) || h.Replication.Role != hikoutei.RoleStandby {
		t.Fatalf("standby health = %v (%v)", h.Local, h.Replication)
	}
	u := standby.Begin()
	mustT(t, u.Persist(&first))
	if _, err := u.Commit(ctx); !errors.Is(err, hikoutei.ErrStandby) {
		t.Fatalf("commit on a standby = %v, want standby", err)
	}
	ids := []string{"SFO", "JFK", "ORD", "ATL", "DEN"}
	for _, id := range ids {
		a := airport(id)
		commit(t, primary, &a)
	}
	eventually(t, "the standby reads every commit", func() bool {
		_, err := hikoutei.Get[Airport](ctx, standby, ids[len(ids)-1])
		return err == nil
	})
	acked := engine.Of(primary).Lease().Epoch
	primaryHead, _ := engine.Of(primary).Log().Head()
	// The primary stops renewing (its heartbeat is off); once its
	// heartbeat is stale the standby's next look at the lease takes over.
	waitWatching(t, x.clock)
	x.clock.Advance(events.StaleHeartbeatAfter + time.Second)
	eventually(t, "the standby takes over", func() bool { return engine.Of(standby).Role() == engine.RolePrimary })
	if h, _ := engine.Of(standby).Log().Head(); h <= primaryHead {
		t.Fatalf("new primary's log head %d, the old one's %d: want every commit and the takeover after it", h, primaryHead)
	}
	for _, id := range append([]string{"LAX"}, ids...) {
		if _, err := hikoutei.Get[Airport](ctx, standby, id); err != nil {
			t.Fatalf("acknowledged commit %s missing after the takeover: %v", id, err)
		}
	}
	if got := engine.Of(standby).Lease().Epoch; got <= acked {
		t.Fatalf("takeover epoch %d, the old primary's %d", got, acked)
	}
	if got, want := engine.Of(standby).Log().StoreID(), engine.Of(primary).Log().StoreID(); got != want {
		t.Fatalf("the new primary is store %s, the old one %s: its spreadsheet authority would be another store's", got, want)
	}
	next := airport("SEA")
	commit(t, standby, &next)
	late := airport("BOS")
	u = primary.Begin()
	mustT(t, u.Persist(&late))
	if _, err := u.Commit(ctx); !errors.Is(err, hikoutei.ErrReplicationFenced) {
		t.Fatalf("old primary's commit after the takeover = %v, want replication_fenced", err)
	}
	if standby.Health().Local != nil {
		t.Fatalf("new primary's health: %v", standby.Health().Local)
	}
	standbyDir := standby.Dir()
	mustT(t, standby.Close())
	if got := replayDigest(t, standbyDir, logHead(t, standbyDir), airports...); got != digest(t, filepath.Join(standbyDir, hikoutei.ReadModelFile)) {
		t.Fatal("the new primary's read model differs from a replay of its log")
	}
}

// waitWatching waits until a goroutine waits on the manual clock (the
// standby's look at the lease), so an Advance reaches it.
func waitWatching(t testing.TB, clock *events.ManualClock) {
	t.Helper()
	eventually(t, "the standby waits on the clock", func() bool {
		n, _ := clock.Waiters()
		return n > 0
	})
}

func logHead(t testing.TB, dir string) uint64 {
	t.Helper()
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	mustT(t, err)
	defer l.Close()
	h, err := l.Head()
	mustT(t, err)
	return h
}

func TestI31_AStoreThatRanOnOneHostStoresItsHistoryInTheStreamAndAStandbyGetsAllOfIt(t *testing.T) {
	x := newReplicated(t)
	dir := t.TempDir()
	local := openStore(t, dir, func(o *hikoutei.Options) { o.NoAdmin = true })
	for _, id := range []string{"LAX", "SFO"} {
		a := airport(id)
		commit(t, local, &a)
	}
	mustT(t, local.Close())
	primary := x.mustOpen(dir, false)
	if replicaHead(t, primary) != x.head() || x.head() == 0 {
		t.Fatalf("store holds stream commits to %d, the stream has %d", replicaHead(t, primary), x.head())
	}
	jfk := airport("JFK")
	commit(t, primary, &jfk)
	standby := x.mustOpen(t.TempDir(), true)
	eventually(t, "the standby reads the history and the new commit", func() bool {
		for _, id := range []string{"LAX", "SFO", "JFK"} {
			if _, err := hikoutei.Get[Airport](ctx, standby, id); err != nil {
				return false
			}
		}
		return true
	})
	// The same store reopened: the history is not stored twice.
	head := x.head()
	mustT(t, primary.Close())
	x.mustOpen(dir, false)  // closed by the test's cleanup
	if x.head() != head+2 { // its release, then its next acquisition
		t.Fatalf("stream head %d after a reopen, want %d", x.head(), head+2)
	}
}

// TestI31_APrimaryWhoseLeaseRenewalsFailPastTheStaleRuleIsUnhealthy: a
// primary that could not renew its lease across hosts for longer than
// the stale heartbeat (the cluster unreachable) cannot store commits and
// may be taken over: its health says replication_unavailable, not ok.
func TestI31_APrimaryWhoseLeaseRenewalsFailPastTheStaleRuleIsUnhealthy(t *testing.T) {
	x := newReplicated(t)
	p := x.mustOpen(t.TempDir(), false) // HeartbeatInterval -1: no renewal succeeds
	if h := p.Health(); h.Local != nil || h.Replication.Role != hikoutei.RolePrimary {
		t.Fatalf("fresh primary health = %v (%v), want ok primary", h.Local, h.Replication.Role)
	}
	x.clock.Advance(events.StaleHeartbeatAfter)
	if h := p.Health(); h.Local != nil {
		t.Fatalf("health at the stale limit = %v, want ok", h.Local)
	}
	x.clock.Advance(time.Second)
	h := p.Health()
	if !errors.Is(h.Local, replication.ErrUnavailable) || strings.Contains(h.Local.Error(), "I0") {
		t.Fatalf("health after %s without a renewal = %v, want replication_unavailable", events.StaleHeartbeatAfter+time.Second, h.Local)
	}
}
