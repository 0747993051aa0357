package hikoutei

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/internal/keyring"
	"github.com/hikoutei/hikoutei-go/internal/replication"
	"github.com/hikoutei/hikoutei-go/internal/replication/replicationtest"
)

// replicatedPeople is a primary and a standby of one replicated store of
// people on a 3-node loopback cluster, sharing a manual clock.
type replicatedPeople struct {
	t       *testing.T
	cluster *replicationtest.Cluster
	clock   *events.ManualClock
}

const peopleStore = "people"

func (x *replicatedPeople) open(standby bool) *Store {
	x.t.Helper()
	dir := x.t.TempDir()
	return openPeople(x.t, dir, func(o *Options) {
		o.Clock = x.clock
		o.Replication = &ReplicationOptions{URL: x.cluster.URLs(), Store: peopleStore, Standby: standby, AppendTimeout: replicationtest.Deadline}
	})
}

// keyStream reads the store's key stream.
func (x *replicatedPeople) keyStream() *replication.KeyStream {
	x.t.Helper()
	ks, err := replication.OpenKeyStream(x.t.Context(), x.cluster.Connect(), replication.Config{Store: peopleStore})
	mustT(x.t, err)
	return ks
}

// keyMessages is how many key messages the key stream holds for d.
func (x *replicatedPeople) keyMessages(d keyring.Digest) int {
	x.t.Helper()
	n := 0
	err := x.keyStream().ReadAll(x.t.Context(), func(m replication.KeyMsg) error {
		if m.Kind == replication.KeyKindKey && m.Digest == d.String() {
			n++
		}
		return nil
	})
	mustT(x.t, err)
	return n
}

// waitUntil waits until cond holds, polling (a correct build reaches it;
// the limit only bounds a broken one).
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(replicationtest.Deadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func nameOf(s *Store, id string) string {
	p, err := Get[Person](ctx, s, id)
	if err != nil {
		return "error: " + err.Error()
	}
	return p.Name
}

// filesHold reports the files under dir whose bytes contain b.
func filesHold(t testing.TB, dir string, b []byte) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		if err == nil && bytes.Contains(raw, b) {
			out = append(out, path)
		}
		return err
	})
	mustT(t, err)
	return out
}

func TestI37_KeysReachAStandbyThroughTheReplicationChannelAndAreDestroyedThere(t *testing.T) {
	x := &replicatedPeople{t: t, cluster: replicationtest.StartCluster(t, 3), clock: events.NewManualClock(t0)}
	primary := x.open(false)
	t.Cleanup(func() { primary.Close() })
	commit(t, primary, &Person{ID: "alice", Name: aliceName, Email: ptr(aliceEmail)}, &Person{ID: "bob", Name: bobName})
	standby := x.open(true)
	t.Cleanup(func() { standby.Close() })
	waitUntil(t, "the standby opens alice's and bob's values", func() bool {
		return nameOf(standby, "alice") == aliceName && nameOf(standby, "bob") == bobName
	})
	sring := standby.keys.ring.Load()
	bob := sring.Digest("bob")
	if bob != primary.keys.ring.Load().Digest("bob") {
		t.Fatal("the standby names bob by another digest than the primary")
	}
	bobKey, ok := sring.KeyGrant(bob)
	if !ok || x.keyMessages(bob) != 1 {
		t.Fatalf("bob's key on the standby: %v, in the key stream: %d", ok, x.keyMessages(bob))
	}

	// Erase bob on the primary: the standby's key file loses the key.
	if _, err := primary.Erase(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the standby shows bob erased", func() bool { return nameOf(standby, "bob") == Erased })
	waitUntil(t, "the standby's key file no longer holds bob's key", func() bool {
		_, live := sring.KeyGrant(bob)
		return !live
	})
	if got := filesHold(t, filepath.Join(standby.Dir(), keyring.File), bobKey[4:]); len(got) > 0 {
		t.Fatalf("bob's erased key is still in %v", got)
	}
	if got := filesHold(t, standby.Dir(), []byte(bobName)); len(got) > 0 {
		t.Fatalf("bob's name in clear in %v", got)
	}
	if n := x.keyMessages(bob); n != 0 {
		t.Fatalf("the key stream still holds %d key message(s) of bob", n)
	}
	// The key stream's message files no longer hold the key (secure
	// delete); the servers' Raft logs keep the append until they compact
	// (docs/replication.md, "Personal data keys").
	for i := range x.cluster.Nodes {
		dir := filepath.Join(x.cluster.StoreDir(i), "jetstream", "$G", "streams", replication.KeyStreamName(peopleStore))
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("node %d: the key stream's files: %v", i, err)
		}
		if got := filesHold(t, dir, bobKey[4:]); len(got) > 0 {
			t.Fatalf("node %d: bob's erased key is still in %v", i, got)
		}
	}

	// A grant of bob's erased key arriving late (a replay, a deposed
	// primary) does not resurrect it: carol's grant, stored after it,
	// shows the standby applied it.
	mustT(t, x.keyStream().Put(t.Context(), replication.KeyKindKey, bob.String(), bobKey))
	commit(t, primary, &Person{ID: "carol", Name: "Carol-Late-3b2a"})
	waitUntil(t, "the standby opens carol's value", func() bool { return nameOf(standby, "carol") == "Carol-Late-3b2a" })
	if _, live := sring.KeyGrant(bob); live || nameOf(standby, "bob") != Erased {
		t.Fatal("a late grant resurrected bob's erased key on the standby")
	}

	// Fail over: the new primary opens alice's value, bob stays erased.
	waitUntil(t, "the standby watches the lease", func() bool { n, _ := x.clock.Waiters(); return n > 0 })
	x.clock.Advance(events.StaleHeartbeatAfter + time.Second)
	waitUntil(t, "the standby takes over", func() bool { return engine.Of(standby).Role() == engine.RolePrimary })
	if got := nameOf(standby, "alice"); got != aliceName {
		t.Fatalf("the new primary reads alice's name as %q", got)
	}
	if got := nameOf(standby, "bob"); got != Erased {
		t.Fatalf("the new primary reads bob's name as %q", got)
	}
	if h := standby.Health().Keys; h != nil {
		t.Fatalf("new primary's keys health: %v", h)
	}
	// The takeover deleted the late grant of bob from the key stream.
	if n := x.keyMessages(bob); n != 0 {
		t.Fatalf("after the takeover the key stream holds %d key message(s) of bob", n)
	}
	commit(t, standby, &Person{ID: "dave", Name: "Dave-After-9e1c"})
	if _, err := standby.Erase(ctx, "alice"); err != nil {
		t.Fatal(err)
	}
	if got := nameOf(standby, "alice"); got != Erased {
		t.Fatalf("alice after her erasure on the new primary: %q", got)
	}
	if n := x.keyMessages(sring.Digest("alice")); n != 0 {
		t.Fatalf("the key stream still holds alice's key after her erasure (%d)", n)
	}
}

func TestAStandbyOfAnotherKeyFileIsRefused(t *testing.T) {
	x := &replicatedPeople{t: t, cluster: replicationtest.StartCluster(t, 3), clock: events.NewManualClock(t0)}
	primary := x.open(false)
	t.Cleanup(func() { primary.Close() })
	commit(t, primary, &Person{ID: "alice", Name: aliceName})
	// A standby directory whose key file was replaced by another store's.
	sb := x.open(true)
	dir := sb.Dir()
	mustT(t, sb.Close())
	otherDir := t.TempDir()
	other := openPeople(t, otherDir)
	commit(t, other, &Person{ID: "zed", Name: "Zed"})
	mustT(t, other.Close())
	raw, err := os.ReadFile(filepath.Join(otherDir, keyring.File))
	mustT(t, err)
	mustT(t, os.WriteFile(filepath.Join(dir, keyring.File), raw, 0o600))
	_, err = Open(t.Context(), dir, Options{Clock: x.clock, HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true,
		Replication: &ReplicationOptions{URL: x.cluster.URLs(), Store: peopleStore, Standby: true}}, Entity[Person]("Person"), Entity[Order]("Order"))
	if !errors.Is(err, ErrPersonalKeyFile) {
		t.Fatalf("a standby with another store's key file = %v, want personal_key_file", err)
	}
}

// TestI37_AStoreReplicatedByAnEarlierBuildGrantsItsKeysWhenItReopens: an
// earlier build replicated the log and kept keys.db local (no key
// stream). Reopened by this build, the primary stores its key file's
// identity and every live key in the new key stream, and a standby then
// opens the values sealed before the upgrade.
func TestI37_AStoreReplicatedByAnEarlierBuildGrantsItsKeysWhenItReopens(t *testing.T) {
	x := &replicatedPeople{t: t, cluster: replicationtest.StartCluster(t, 3), clock: events.NewManualClock(t0)}
	primary := x.open(false)
	commit(t, primary, &Person{ID: "alice", Name: aliceName})
	dir := primary.Dir()
	mustT(t, primary.Close())
	js, err := jetstream.New(x.cluster.Connect())
	mustT(t, err)
	mustT(t, js.DeleteStream(t.Context(), replication.KeyStreamName(peopleStore))) // as an earlier build left it
	primary = openPeople(t, dir, func(o *Options) {
		o.Clock = x.clock
		o.Replication = &ReplicationOptions{URL: x.cluster.URLs(), Store: peopleStore, AppendTimeout: replicationtest.Deadline}
	})
	t.Cleanup(func() { primary.Close() })
	if n := x.keyMessages(primary.keys.ring.Load().Digest("alice")); n != 1 {
		t.Fatalf("the reopened primary stored %d key message(s) of alice, want 1", n)
	}
	standby := x.open(true)
	t.Cleanup(func() { standby.Close() })
	waitUntil(t, "the standby opens alice's value sealed before the upgrade", func() bool { return nameOf(standby, "alice") == aliceName })
}

// TestI37_AKeyGrantIsBoundedByTheConfiguredAppendTimeout: with the
// cluster gone, a commit that must first store a fresh subject's key in
// the key stream fails after ReplicationOptions.AppendTimeout, as the
// log's append would, not after the 30 s default.
func TestI37_AKeyGrantIsBoundedByTheConfiguredAppendTimeout(t *testing.T) {
	x := &replicatedPeople{t: t, cluster: replicationtest.StartCluster(t, 3), clock: events.NewManualClock(t0)}
	const appendTimeout = time.Second
	primary := openPeople(t, t.TempDir(), func(o *Options) {
		o.Clock = x.clock
		o.Replication = &ReplicationOptions{URL: x.cluster.URLs(), Store: peopleStore, AppendTimeout: appendTimeout}
	})
	t.Cleanup(func() { primary.Close() })
	commit(t, primary, &Person{ID: "alice", Name: aliceName, Email: ptr(aliceEmail)})
	x.cluster.Shutdown()
	u := primary.Begin()
	mustT(t, u.Persist(&Person{ID: "bob", Name: bobName}))
	start := time.Now()
	_, err := u.Commit(ctx)
	if took := time.Since(start); err == nil || took > 10*appendTimeout {
		t.Fatalf("a commit granting a key with the cluster gone: %v after %s, want an error within about %s", err, took, appendTimeout)
	}
}
