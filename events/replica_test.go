package events

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// openReplicated opens a fresh log whose commits go through r.
func openReplicated(t *testing.T, r Replicator) *Log {
	t.Helper()
	l, err := OpenLog(filepath.Join(t.TempDir(), LogFileName), Options{Clock: NewManualClock(t0), Replicator: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func withoutTokens(evs []Event) []Event {
	out := append([]Event(nil), evs...)
	for i := range out {
		out[i].Token = ""
	}
	return out
}

func TestI31_EveryCommitIsReplicatedBeforeItCommitsAndAFollowerHoldsTheSameLog(t *testing.T) {
	r := &memReplica{}
	primary := openReplicated(t, r)
	f := acquire(t, primary, "w1").Fence()
	_, err := primary.Append(f, unit("entity/Part/1", 0, 2), unit("entity/Part/2", 0, 1))
	must(t, err)
	_, err = primary.Append(f, unit("entity/Part/1", 2, 1))
	must(t, err)
	if head, _ := primary.ReplicaHead(); head != r.Head() || head < 3 {
		t.Fatalf("replica head %d, replicated %d commits", head, r.Head())
	}
	standby := openReplicated(t, nil)
	must(t, r.Follow(standby))
	got, want := readAll(t, standby, 1), withoutTokens(readAll(t, primary, 1))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the standby holds %d events, the primary %d: they differ", len(got), len(want))
	}
	for _, e := range got {
		if e.Token != "" {
			t.Fatalf("a fencing token left the store: seq %d", e.Seq)
		}
	}
	must(t, r.Follow(standby)) // nothing new: nothing applied twice
	if h, _ := standby.Head(); h != uint64(len(want)) {
		t.Fatalf("standby head %d after a second follow", h)
	}
}

func TestI31_AFencedReplicaAppendCommitsNothingLocally(t *testing.T) {
	r := &memReplica{}
	l := openReplicated(t, r)
	f := acquire(t, l, "w1").Fence()
	head, _ := l.Head()
	r.FailNext(ErrReplicaFenced, false)
	_, err := l.Append(f, unit("entity/Part/1", 0, 1))
	if !errors.Is(err, ErrStaleWriterFence) || !errors.Is(err, ErrReplicaFenced) {
		t.Fatalf("append = %v, want the writer fenced", err)
	}
	if h, _ := l.Head(); h != head {
		t.Fatalf("head moved from %d to %d", head, h)
	}
}

func TestI31_AnUnansweredReplicaAppendIsUncertainAndTheFollowerStillGetsIt(t *testing.T) {
	r := &memReplica{}
	l := openReplicated(t, r)
	f := acquire(t, l, "w1").Fence()
	head, _ := l.Head()
	r.FailNext(errors.New("timeout"), true) // stored, acknowledgement lost
	_, err := l.Append(f, unit("entity/Part/1", 0, 1))
	if !errors.Is(err, ErrReplicaUncertain) {
		t.Fatalf("append = %v, want %v", err, ErrReplicaUncertain)
	}
	if h, _ := l.Head(); h != head {
		t.Fatalf("a commit whose replication is uncertain was committed locally (head %d → %d)", head, h)
	}
	must(t, r.Follow(l)) // the next open catches up from the replicated log
	evs := readAll(t, l, head+1)
	if len(evs) != 1 || evs[0].Stream != "entity/Part/1" {
		t.Fatalf("after catching up: %+v", evs)
	}
}

func TestApplyReplicaRefusesAGapAndARecordOutOfItsStreamOrder(t *testing.T) {
	r := &memReplica{}
	primary := openReplicated(t, r)
	f := acquire(t, primary, "w1").Fence()
	_, err := primary.Append(f, unit("entity/Part/1", 0, 1))
	must(t, err)
	standby := openReplicated(t, nil)
	if err := standby.ApplyReplica(2, r.Commit(2)); !errors.Is(err, ErrReplicaGap) {
		t.Fatalf("commit 2 before 1: %v", err)
	}
	if err := standby.ApplyReplica(1, r.Commit(2)); err == nil {
		t.Fatal("records that do not continue the log were applied")
	}
	if h, _ := standby.Head(); h != 0 {
		t.Fatalf("a refused commit left head %d", h)
	}
}

func TestI31_AnElectedStandbyTakesOverAboveTheReplicatedEpochAndTheOldPrimaryIsFenced(t *testing.T) {
	r := &memReplica{}
	primary := openReplicated(t, r)
	old := acquire(t, primary, "primary")
	_, err := primary.Append(old.Fence(), unit("entity/Part/1", 0, 1))
	must(t, err)
	standby := openReplicated(t, r)
	must(t, r.Follow(standby))
	held, ok, err := standby.Lease(DefaultRole)
	if err != nil || !ok || held.Epoch != old.Epoch || held.WriterID != "primary" || held.Token != "" {
		t.Fatalf("replicated lease %+v %v %v: want the primary's epoch, no token", held, ok, err)
	}
	if _, err := standby.AcquireLease(AcquireRequest{WriterID: "standby", Operation: "test"}); !errors.Is(err, ErrLeaseHeld) {
		t.Fatalf("an unelected takeover of a live replicated lease = %v", err)
	}
	next, err := standby.AcquireLease(AcquireRequest{WriterID: "standby", Operation: "test", Elected: true, MinEpoch: old.Epoch + 5})
	if err != nil || next.Epoch != old.Epoch+5 {
		t.Fatalf("elected takeover = %+v %v, want epoch %d", next, err, old.Epoch+5)
	}
	if _, err := primary.Append(old.Fence(), unit("entity/Part/1", 1, 1)); !errors.Is(err, ErrReplicaFenced) {
		t.Fatalf("the old primary's append after the takeover = %v, want fenced", err)
	}
	_, err = standby.Append(next.Fence(), unit("entity/Part/1", 1, 1))
	must(t, err)
}

func TestAGivenStoreIDNamesANewLogAndMustMatchAnExistingOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), LogFileName)
	l, err := OpenLog(path, Options{StoreID: "shop-primary"})
	must(t, err)
	if l.StoreID() != "shop-primary" {
		t.Fatalf("store id %q", l.StoreID())
	}
	must(t, l.Close())
	if _, err := OpenLog(path, Options{StoreID: "another"}); !errors.Is(err, ErrStoreIDMismatch) {
		t.Fatalf("open as another store = %v", err)
	}
	l, err = OpenLog(path, Options{})
	must(t, err)
	must(t, l.Close())
}
