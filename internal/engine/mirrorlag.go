package engine

import (
	"cmp"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// DefaultMirrorLagBound is how long the oldest committed record may wait
// for the NATS event mirror before Health.Mirror reports
// ErrMirrorBehind: twice the mirror's longest wait between two attempts
// after a failure (30 s), so one failed attempt and its retry fit in it.
const DefaultMirrorLagBound = 60 * time.Second

// MirrorLag is how far the NATS event mirror trails the log (I36), from
// local state only: the last record the mirror stream is known to hold
// and the log's head.
type MirrorLag struct {
	Mirrored uint64 // the log seq of the last record the stream is known to hold
	LogHead  uint64
	// Records counts the committed records the mirror does not hold yet
	// (sequences the log lost, holes, are not records).
	Records uint64
	// Age is how long the oldest of them has waited (0: none): since it
	// was committed, or since the store opened for a record committed
	// before.
	Age time.Duration
	// Bound is the age past which the mirror is behind (ErrMirrorBehind).
	Bound time.Duration
}

// Behind reports whether the mirror trails past its bound.
func (l *MirrorLag) Behind() bool { return l != nil && l.Records > 0 && l.Age > l.Bound }

// MirrorLagError is Health.Mirror when the mirror trails past its bound.
// It wraps ErrMirrorBehind.
type MirrorLagError struct{ Lag MirrorLag }

func (e *MirrorLagError) Error() string {
	l := e.Lag
	return fmt.Sprintf("%s: the mirror holds the log up to seq %d, %d record(s) and %.0f s behind the log head %d (bound %s)",
		ErrMirrorBehind, l.Mirrored, l.Records, l.Age.Seconds(), l.LogHead, l.Bound)
}

// Unwrap returns ErrMirrorBehind.
func (e *MirrorLagError) Unwrap() error { return ErrMirrorBehind }

// mirrorWait tracks since when the oldest record the mirror does not hold
// has waited: set by a commit when nothing waited, and by the mirror loop
// after each attempt from the first record past what the stream holds.
type mirrorWait struct {
	mu      sync.Mutex
	since   time.Time // zero: nothing known to wait
	started time.Time // when the mirror loop started: older records wait from then
	noted   uint64    // the mirrored head the last noteMirrored read the log after (mirror loop only)
}

// committed notes a commit at now: if nothing waited, its records wait
// from now.
func (w *mirrorWait) committed(now time.Time) {
	w.mu.Lock()
	if w.since.IsZero() {
		w.since = now
	}
	w.mu.Unlock()
}

// set records when the oldest waiting record was committed (zero: none
// waits).
func (w *mirrorWait) set(at time.Time) {
	w.mu.Lock()
	if !at.IsZero() && at.Before(w.started) {
		at = w.started
	}
	w.since = at
	w.mu.Unlock()
}

func (w *mirrorWait) get() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.since
}

// errMirrorScanDone stops a log read after its first record.
var errMirrorScanDone = errors.New("done")

// noteMirrored updates the wait after a mirror attempt: the first record
// past what the stream holds waits since it was committed.
func (e *Engine) noteMirrored() {
	m := e.nats.bus.MirroredHead()
	if m == e.nats.wait.noted && !e.nats.wait.get().IsZero() {
		return // nothing was mirrored since: the oldest waiting record is the same
	}
	e.nats.wait.noted = m
	var oldest time.Time
	err := e.Log().ReadFrom(m+1, func(ev events.Event) error {
		oldest = ev.At
		return errMirrorScanDone
	})
	if err != nil && !errors.Is(err, errMirrorScanDone) {
		return // unknown: keep what is known
	}
	if oldest.IsZero() {
		e.nats.wait.set(time.Time{})
		return
	}
	e.nats.wait.set(oldest)
}

// mirrorLag is the mirror's lag (nil when the mirror is off), from local
// state only: the log's head and holes, the bus's last acknowledged seq
// and the wait the loop and the commits noted. It never waits on the
// network (I29).
func (e *Engine) mirrorLag() *MirrorLag {
	if e.nats == nil || !e.nats.mirrorOn {
		return nil
	}
	l := &MirrorLag{Mirrored: e.nats.bus.MirroredHead(), Bound: cmp.Or(e.nats.lagBound, DefaultMirrorLagBound)}
	head, err := e.Log().Head()
	l.LogHead = head
	if err != nil || head <= l.Mirrored {
		return l
	}
	var gap events.SeqRanges
	gap.AddRange(l.Mirrored+1, head)
	l.Records = gap.Minus(e.holes).Count()
	if since := e.nats.wait.get(); l.Records > 0 && !since.IsZero() {
		l.Age = max(e.cfg.Clock.Now().Sub(since), 0)
	}
	return l
}
