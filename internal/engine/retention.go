package engine

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/retention"
)

// RetentionState is what the store's background sealing does.
type RetentionState string

// Retention states (Health.Retention.State).
const (
	RetentionOff        RetentionState = "off"         // no policy: the store never seals by itself
	RetentionOn         RetentionState = "on"          // the policy runs; its last seal (if any) succeeded
	RetentionFailing    RetentionState = "failing"     // the last seal failed (Err says why)
	RetentionNotRunning RetentionState = "not_running" // a policy is set but this store does not seal (Reason)
)

// RetentionStatus is the background sealing's state and counters since
// the store opened (times on the store's clock).
type RetentionStatus struct {
	State    RetentionState
	Reason   string // why a set policy does not run (not_running)
	Seals    uint64 // seals that committed
	Failures uint64 // attempts that failed
	// LastSealAt is when the last seal committed; SealedBelow is its
	// retention point (the first sequence log.db keeps).
	LastSealAt  time.Time
	SealedBelow uint64
	// Err is the last failure, wrapping ErrRetentionFailing (nil unless
	// failing); FailingSince is the first failure of the current run.
	Err          error
	FailingSince time.Time
}

// notRunningStandby is why a standby does not run its retention policy:
// it seals what its primary seals, when it applies the primary's
// segment.sealed (docs/replication.md, "Retention").
const notRunningStandby = "a standby seals what its primary seals (it applies the primary's seals from the stream)"

// retainer runs the background seals beside the writer.
type retainer struct {
	policy retention.Policy
	bell   chan struct{} // rung by the writer when a check is due (one pending)
	ready  chan struct{} // closed by retentionReady once NATS and sync are set up
	done   chan struct{} // closed when the retainer stopped
	rung   uint64        // the read model's checkpoint at the last ring (writer-owned)
	every  uint64        // records between two rings

	mu      sync.Mutex
	status  RetentionStatus
	changed chan struct{} // closed (and replaced) when a seal's outcome is recorded
}

// startRetention starts the retainer when a policy is set (the writer
// starts it: a standby runs none until it takes over), and rings it once
// for what the log already holds.
func (e *Engine) startRetention() {
	if !e.cfg.Retention.On() {
		return
	}
	r := &retainer{policy: e.cfg.Retention, bell: make(chan struct{}, 1), ready: make(chan struct{}), done: make(chan struct{}),
		rung: e.proj.Checkpoint(), every: max(1, e.cfg.Retention.Batch()/4), status: RetentionStatus{State: RetentionOn},
		changed: make(chan struct{})}
	e.retain = r
	r.bell <- struct{}{}
	go e.runRetention()
}

// retentionReady lets the retainer seal: a seal runs on the writer and
// reads what starting NATS and sync set up (the conflict hook, the
// mirror), so it waits until they are.
func (e *Engine) retentionReady() {
	if e.retain != nil {
		close(e.retain.ready)
	}
}

// runRetention seals each time the bell rings, once ready, until the
// store stops.
func (e *Engine) runRetention() {
	defer close(e.retain.done)
	select {
	case <-e.stop:
		return
	case <-e.retain.ready:
	}
	for {
		select {
		case <-e.stop:
			return
		case <-e.retain.bell:
			e.retainOnce()
		}
	}
}

// ringRetention rings the retainer when a quarter of a batch was applied
// since the last ring (called by the writer after each batch).
func (e *Engine) ringRetention() {
	r := e.retain
	if r == nil || e.proj.Checkpoint()-r.rung < r.every {
		return
	}
	r.rung = e.proj.Checkpoint()
	select {
	case r.bell <- struct{}{}:
	default: // a check is pending: it sees the head it finds
	}
}

// stopRetention waits for the retainer to stop (after e.stop closed).
func (e *Engine) stopRetention() {
	if e.retain != nil {
		<-e.retain.done
	}
}

// retainOnce decides the retention point at the store's now and seals
// below it when a batch is due; the outcome goes to the status (and the
// log), never silently.
func (e *Engine) retainOnce() {
	now := e.cfg.Clock.Now()
	st, err := e.retentionState(now)
	below := uint64(0)
	if err == nil {
		if below = e.retain.policy.Point(st); below == 0 {
			return
		}
		err = e.sealRetained(below)
	}
	if err != nil && e.isClosed() {
		return // stopping: the next open checks again
	}
	e.retain.record(now, below, err)
	if err != nil {
		e.log.Error("retention could not seal old records", "err", err.Error())
	}
}

// sealRetained seals below for the retention policy and logs it. A seal
// that committed counts as one even when the read model could not record
// it (ErrReadModelBehind, logged by projected: caught up before the next
// commit, and a catch-up that fails shows in the health).
func (e *Engine) sealRetained(below uint64) error {
	rep, err := e.Seal(below)
	if err != nil && !errors.Is(err, ErrReadModelBehind) {
		return err
	}
	e.log.Info("retention sealed old records", "segment", rep.Segment.Name, "first", rep.Segment.First,
		"last", rep.Segment.Last, "records", rep.Segment.Records)
	return nil
}

// SealState reads what any seal is bounded by: the first record no
// segment holds, the log's head and the read model's checkpoint (the
// rest of retention.State is zero).
func (e *Engine) SealState() (retention.State, error) {
	l := e.Log()
	segs, err := l.Segments()
	if err != nil {
		return retention.State{}, err
	}
	st := retention.State{Unsealed: 1, Applied: e.Checkpoint()}
	if n := len(segs); n > 0 {
		st.Unsealed = segs[n-1].Last + 1
	}
	st.Head, err = l.Head()
	return st, err
}

// retentionState reads what the retention decision needs at now.
func (e *Engine) retentionState(now time.Time) (retention.State, error) {
	st, err := e.SealState()
	if err != nil {
		return st, err
	}
	l, p := e.Log(), e.retain.policy
	if p.BelowSnapshot {
		if st.Snapshot, err = e.newestSnapshot(); err != nil {
			return st, err
		}
	}
	if p.MaxAge > 0 {
		st.Young, err = firstAtOrAfter(l, st.Unsealed, st.Head, p.Cutoff(now))
	}
	return st, err
}

// newestSnapshot is the sequence of the newest snapshot file the store
// keeps (0: none).
func (e *Engine) newestSnapshot() (uint64, error) {
	if e.snaps == nil {
		return 0, nil
	}
	seqs, err := e.snaps.List()
	var newest uint64
	for _, s := range seqs {
		newest = max(newest, s)
	}
	return newest, err
}

// errYoung stops firstAtOrAfter's read at the first young record.
var errYoung = errors.New("young record")

// firstAtOrAfter is the first sequence from from on whose commit time is
// not before cutoff (head+1 when none is).
func firstAtOrAfter(l *events.Log, from, head uint64, cutoff time.Time) (uint64, error) {
	young := head + 1
	err := l.ReadFrom(from, func(ev events.Event) error {
		if ev.Seq > head || !ev.At.Before(cutoff) {
			young = min(young, ev.Seq)
			return errYoung
		}
		return nil
	})
	if errors.Is(err, errYoung) {
		err = nil
	}
	return young, err
}

// record notes one seal's outcome.
func (r *retainer) record(now time.Time, below uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.changed)
	r.changed = make(chan struct{})
	s := &r.status
	if err == nil {
		s.State, s.Seals, s.LastSealAt, s.SealedBelow, s.Err, s.FailingSince = RetentionOn, s.Seals+1, now, below, nil, time.Time{}
		return
	}
	if s.State != RetentionFailing {
		s.FailingSince = now
	}
	s.State, s.Failures = RetentionFailing, s.Failures+1
	s.Err = fmt.Errorf("%w: background sealing below seq %d failed (failing since %s): %w",
		ErrRetentionFailing, below, s.FailingSince.UTC().Format(time.RFC3339), err)
}

// RetentionStatus is the background sealing's state now.
func (e *Engine) RetentionStatus() RetentionStatus {
	switch {
	case !e.cfg.Retention.On():
		return RetentionStatus{State: RetentionOff}
	case e.retain == nil && e.cfg.Replication != nil && e.cfg.Replication.Standby:
		return RetentionStatus{State: RetentionNotRunning, Reason: notRunningStandby}
	case e.retain == nil:
		return RetentionStatus{State: RetentionOn}
	}
	e.retain.mu.Lock()
	defer e.retain.mu.Unlock()
	return e.retain.status
}

// RetentionBell is closed when the next seal's outcome is recorded (nil,
// never closed, when the store runs no retention).
func (e *Engine) RetentionBell() <-chan struct{} {
	if e.retain == nil {
		return nil
	}
	e.retain.mu.Lock()
	defer e.retain.mu.Unlock()
	return e.retain.changed
}
