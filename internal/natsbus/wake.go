package natsbus

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// WakeKind names a wake-up subject.
type WakeKind string

// Wake kinds. A wake-up is a hint with an empty body: a worker that misses
// one still runs on its timer, so a lost hint costs at most a timer period.
const (
	// WakeKindDispatch: "hikoutei.<store>.wake.dispatch", wakes the dispatcher.
	WakeKindDispatch WakeKind = "dispatch"
	// WakeKindPoll: "hikoutei.<store>.wake.poll", wakes the pollers.
	WakeKindPoll WakeKind = "poll"
)

func (k WakeKind) index() (int, bool) {
	switch k {
	case WakeKindDispatch:
		return 0, true
	case WakeKindPoll:
		return 1, true
	}
	return 0, false
}

func (k WakeKind) suffix() string {
	if k == WakeKindPoll {
		return SuffixWakePoll
	}
	return SuffixWakeDispatch
}

// WakeDispatch raises a wake-up hint on "hikoutei.<store>.wake.dispatch".
// It never blocks and never fails: it sets a pending flag that a publisher
// goroutine turns into at most one message per Config.WakeInterval, so any
// number of calls (e.g. one per committed event) costs a handful of
// messages. While NATS is unreachable the hint is dropped and counted.
func (b *Bus) WakeDispatch() { b.Wake(WakeKindDispatch) }

// WakePoll raises a wake-up hint on "hikoutei.<store>.wake.poll"; same
// contract as WakeDispatch.
func (b *Bus) WakePoll() { b.Wake(WakeKindPoll) }

// Wake raises a coalesced hint of the given kind (see WakeDispatch). An
// unknown kind, or a closed Bus, is a no-op.
func (b *Bus) Wake(kind WakeKind) {
	i, ok := kind.index()
	if !ok {
		return
	}
	b.st.wakesRequested.Add(1)
	if b.closed.Load() {
		b.st.wakesDropped.Add(1)
		return
	}
	select {
	case b.wake[i] <- struct{}{}:
	default:
		b.st.wakesCoalesced.Add(1)
	}
}

// wakeLoop turns pending hints of one kind into messages: the first at once,
// then at most one per WakeInterval (trailing hints are never lost while
// the Bus is open).
func (b *Bus) wakeLoop(kind WakeKind) {
	defer b.wg.Done()
	i, _ := kind.index()
	sig := b.wake[i]
	subject := b.Subject(kind.suffix())
	var last time.Time
	timer := time.NewTimer(0)
	<-timer.C
	for {
		select {
		case <-b.done:
			return
		case <-sig:
		}
		if !last.IsZero() {
			if wait := b.cfg.WakeInterval - time.Since(last); wait > 0 {
				timer.Reset(wait)
				select {
				case <-b.done:
					timer.Stop()
					return
				case <-timer.C:
				}
			}
		}
		select { // a hint raised while waiting rides on this message
		case <-sig:
			b.st.wakesCoalesced.Add(1)
		default:
		}
		last = time.Now()
		if b.nc.Status() != nats.CONNECTED {
			b.st.wakesDropped.Add(1)
			continue
		}
		if err := b.nc.Publish(subject, nil); err != nil {
			b.st.wakesDropped.Add(1)
			continue
		}
		b.st.wakesPublished.Add(1)
	}
}

// WakeSubscription delivers wake-up hints of one kind on C, for a worker to
// select on next to its timer. C has capacity 1 and is never closed: hints
// that arrive while one is pending are merged, so a receive means "at least
// one hint since the last receive".
type WakeSubscription struct {
	// C receives a value per (coalesced) hint.
	C <-chan struct{}

	sub  *nats.Subscription
	once sync.Once
}

// Stop unsubscribes; C receives nothing afterwards (a value already pending
// may remain). Idempotent.
func (w *WakeSubscription) Stop() {
	w.once.Do(func() { _ = w.sub.Unsubscribe() })
}

// SubscribeWake subscribes to wake-up hints of kind from any publisher of
// this store (this process included). When connected it waits (at most
// Config.ConnectTimeout) until the server has registered the subscription,
// so hints raised after it returns are delivered; when not connected it
// returns at once and the subscription starts with the reconnect. Errors: ErrClosed, ErrConfigInvalid
// (unknown kind), ErrSubscribeFailed.
func (b *Bus) SubscribeWake(kind WakeKind) (*WakeSubscription, error) {
	if _, ok := kind.index(); !ok {
		return nil, fmt.Errorf("%w: unknown wake kind %q", ErrConfigInvalid, kind)
	}
	if b.closed.Load() {
		return nil, ErrClosed
	}
	c := make(chan struct{}, 1)
	sub, err := b.nc.Subscribe(b.Subject(kind.suffix()), func(*nats.Msg) {
		select {
		case c <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: wake %s: %v", ErrSubscribeFailed, kind, err)
	}
	b.flushSubscription()
	return &WakeSubscription{C: c, sub: sub}, nil
}

// OnWake calls fn (on its own goroutine, never concurrently with itself)
// after hints of kind arrive; hints arriving while fn runs cause one more
// call. stop (or Close) ends the goroutine without waiting for it: a
// call already under way finishes, and no new call starts once the
// goroutine has seen stop. stop is idempotent and may be called from fn.
// Errors: as SubscribeWake.
func (b *Bus) OnWake(kind WakeKind, fn func()) (stop func(), err error) {
	ws, err := b.SubscribeWake(kind)
	if err != nil {
		return nil, err
	}
	quit := make(chan struct{})
	go func() {
		for {
			select {
			case <-quit:
				return
			case <-b.done:
				return
			case <-ws.C:
			}
			select {
			case <-quit:
				return
			default:
			}
			fn()
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			ws.Stop()
			close(quit)
		})
	}, nil
}

// flushSubscription makes the server register a new subscription before
// the subscriber returns (bounded; skipped while not connected).
func (b *Bus) flushSubscription() {
	if b.nc.Status() == nats.CONNECTED {
		_ = b.nc.FlushTimeout(b.cfg.ConnectTimeout)
	}
}
