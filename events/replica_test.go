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
	r := &MemReplica{}
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
	r := &MemReplica{}
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
	r := &MemReplica{}
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
	r := &MemReplica{}
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
