// Package ratelimit holds the project's rate limits: Limiter lets through
// at most one event of each kind per interval (serve's INFO lines,
// doctor's progress lines), and Budget paces one class of Sheets requests
// of one user, tuned by AIMD on 429s (the provider's quota budget). The
// clocks of their decisions are injected, so tests advance them instead
// of sleeping.
package ratelimit

import (
	"sync"
	"time"
)

// Limiter allows one event per kind per interval. Its methods are safe
// for concurrent use.
type Limiter struct {
	every time.Duration
	now   func() time.Time
	mu    sync.Mutex
	last  map[string]time.Time
}

// New returns a Limiter allowing one event per kind every interval, by
// the clock now (nil: time.Now).
func New(every time.Duration, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{every: every, now: now, last: map[string]time.Time{}}
}

// Allow reports whether an event of kind may happen now: the first of a
// kind always may, the next once interval has passed since the last one
// allowed.
func (l *Limiter) Allow(kind string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.now()
	if last, ok := l.last[kind]; ok && t.Sub(last) < l.every {
		return false
	}
	l.last[kind] = t
	return true
}

// Forget makes the next event of kind allowed at once (a step that ended).
func (l *Limiter) Forget(kind string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.last, kind)
}
