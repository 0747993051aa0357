package events

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func leaseEvents(t *testing.T, l *Log) []Event {
	t.Helper()
	var out []Event
	must(t, l.ReadStream(LeaseStream(DefaultRole), 1, func(e Event) error { out = append(out, e); return nil }))
	return out
}

func TestI22_LeaseFileExistsOnlyWhileHeldAndCleanCloseReopensAtOnce(t *testing.T) {
	dir := t.TempDir()
	clock := NewManualClock(t0)
	opts := WriterOptions{Log: Options{Clock: clock}, Operation: "test", AcquireWait: -1, HeartbeatInterval: -1}
	w, err := OpenWriter(dir, opts)
	must(t, err)
	lf, err := ReadLeaseFile(dir)
	must(t, err)
	if lf.Holder.WriterID != w.Lease().WriterID || lf.Operation != "test" || lf.Holder.PID != int64(os.Getpid()) {
		t.Fatalf("lease.toml %+v", lf)
	}
	must(t, w.Close())
	if _, err := os.Stat(filepath.Join(dir, LeaseFileName)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("lease.toml after clean close: %v", err)
	}
	w2, err := OpenWriter(dir, opts) // same instant: no waiting for any TTL
	must(t, err)
	defer w2.Close()
	if w2.Lease().Epoch != 2 {
		t.Fatalf("epoch %d", w2.Lease().Epoch)
	}
	evs := leaseEvents(t, w2.Log())
	if len(evs) != 3 || evs[0].Type() != TypeLeaseAcquired || evs[1].Type() != TypeLeaseReleased || evs[2].Type() != TypeLeaseAcquired {
		t.Fatalf("lease events %v", evs)
	}
	if evs[0].Payload.(LeaseAcquired).State != LeaseStateHeld || evs[1].Payload.(LeaseReleased).State != LeaseStateReleased {
		t.Fatalf("lease event states %+v", evs)
	}
}

// crash leaves a writer as a kill -9 would: lease held, lease.toml present.
func crash(t *testing.T, w *Writer) {
	t.Helper()
	close(w.stop)
	w.done.Wait()
	must(t, w.log.Close())
}

func TestI22_LeftoverFromDeadRunIsReconciledThroughAnEvent(t *testing.T) {
	dir := t.TempDir()
	clock := NewManualClock(t0)
	opts := WriterOptions{Log: Options{Clock: clock}, AcquireWait: -1, HeartbeatInterval: -1}
	dead, err := OpenWriter(dir, opts)
	must(t, err)
	deadLease := dead.Lease()
	crash(t, dead)

	// Live by the rule (heartbeat 1 s old): never seized, leftover untouched.
	clock.Advance(time.Second)
	_, err = OpenWriter(dir, opts)
	var held *LeaseHeldError
	if !errors.As(err, &held) || held.WriterID != deadLease.WriterID {
		t.Fatalf("open over a live lease: %v", err)
	}
	if lf, err := ReadLeaseFile(dir); err != nil || lf.Holder.WriterID != deadLease.WriterID {
		t.Fatalf("leftover was touched: %+v %v", lf, err)
	}

	clock.Advance(StaleHeartbeatAfter) // heartbeat now 16 s old
	w, err := OpenWriter(dir, opts)
	must(t, err)
	defer w.Close()
	evs := leaseEvents(t, w.Log())
	rec, took := evs[len(evs)-2], evs[len(evs)-1]
	if r, ok := rec.Payload.(LeaseReconciled); !ok || r.State != LeaseStateReconciled || r.WriterID != deadLease.WriterID {
		t.Fatalf("reconciliation event %+v", rec)
	}
	if g, ok := took.Payload.(LeaseTakenOver); !ok || g.Reason != "stale_heartbeat" || w.Lease().Epoch != deadLease.Epoch+1 {
		t.Fatalf("takeover event %+v", took)
	}
	if lf, _ := ReadLeaseFile(dir); lf.Holder.WriterID != w.Lease().WriterID {
		t.Fatal("lease.toml does not name the new holder")
	}
}

func TestI22_OpenWaitsOnTheClockForADeadHolderThenTakesOver(t *testing.T) {
	dir := t.TempDir()
	clock := NewManualClock(t0)
	dead, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: clock}, HeartbeatInterval: -1})
	must(t, err)
	crash(t, dead)
	type result struct {
		w   *Writer
		err error
	}
	done := make(chan result, 1)
	go func() {
		w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: clock}, HeartbeatInterval: -1})
		done <- result{w, err}
	}()
	waitWaiters(t, clock, 1) // blocked on the takeover instant, not spinning
	clock.Advance(StaleHeartbeatAfter + time.Millisecond)
	r := <-done
	must(t, r.err)
	defer r.w.Close()
	if r.w.Lease().Epoch != 2 {
		t.Fatalf("epoch %d", r.w.Lease().Epoch)
	}
}

func TestI22_MalformedLeftoverIsMovedAsideNotDeleted(t *testing.T) {
	dir := t.TempDir()
	first, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, HeartbeatInterval: -1})
	must(t, err)
	must(t, first.Close())
	must(t, os.WriteFile(filepath.Join(dir, LeaseFileName), []byte("garbage = true\n"), 0o600))
	w, err := OpenWriter(dir, WriterOptions{Log: Options{Clock: NewManualClock(t0)}, HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	matches, _ := filepath.Glob(filepath.Join(dir, LeaseFileName+".invalid-*"))
	if len(matches) != 1 {
		t.Fatalf("moved-aside files: %v", matches)
	}
	if data, _ := os.ReadFile(matches[0]); string(data) != "garbage = true\n" {
		t.Fatal("the malformed file's content was not kept")
	}
	evs := leaseEvents(t, w.Log())
	if r, ok := evs[len(evs)-2].Payload.(LeaseReconciled); !ok || !strings.Contains(r.Operation, "invalid") {
		t.Fatalf("events %+v", evs)
	}
}

func TestSecondOpenInSameProcessFailsFastNamingHolder(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenWriter(dir, WriterOptions{Operation: "serve", HeartbeatInterval: -1})
	must(t, err)
	defer w.Close()
	_, err = OpenWriter(dir, WriterOptions{Log: Options{OpenTimeout: 100 * time.Millisecond}})
	var sl *StoreLockedError
	if !errors.As(err, &sl) || sl.Operation != "serve" || !strings.Contains(sl.Holder, w.Lease().WriterID) {
		t.Fatalf("err = %v", err)
	}
}
