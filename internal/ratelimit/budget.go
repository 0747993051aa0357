package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// AIMD tunes a request budget's rate from the server's answers: a 429
// multiplies the rate by Decrease (never below Floor), and each success
// adds Increase back (never above Ceiling, the configured rate). 429s
// that arrive within Hold of the last decrease are counted but cut
// nothing more: requests in flight together meet the same exhausted
// quota, and one exhausted quota is one decrease, whichever worker saw it.
type AIMD struct {
	Ceiling  rate.Limit // the configured rate
	Floor    rate.Limit // the least the rate falls to
	Decrease float64    // factor applied on a 429, in (0, 1)
	Increase rate.Limit // added after each success
	Hold     time.Duration
}

// DefaultAIMD is the tuning for a budget configured at ceiling: halve on a
// 429 (at most once per 5 s), down to a tenth of the ceiling, and add a
// twentieth of it back per success (about 20 successes from the floor to
// the ceiling's half, 10 more to the ceiling).
func DefaultAIMD(ceiling rate.Limit) AIMD {
	return AIMD{Ceiling: ceiling, Floor: ceiling / 10, Decrease: 0.5, Increase: ceiling / 20, Hold: 5 * time.Second}
}

// Signal is what one request's answer tells the budget.
type Signal int

const (
	// Succeeded is an answer that spent no more than the quota allowed.
	Succeeded Signal = iota
	// Throttled is a 429: the quota is exhausted.
	Throttled
)

// State is a budget's rate and its history.
type State struct {
	Limit     rate.Limit // the current rate
	Cut       time.Time  // the last decrease (zero: never)
	Throttled uint64     // 429s seen
}

// Next is the state after sig at now: the pure decision of the budget.
// An unlimited ceiling (rate.Inf: pacing off) is never tuned.
func (a AIMD) Next(s State, sig Signal, now time.Time) State {
	if sig == Throttled {
		s.Throttled++
	}
	if a.Ceiling == rate.Inf {
		s.Limit = rate.Inf
		return s
	}
	switch {
	case sig == Throttled && (s.Cut.IsZero() || now.Sub(s.Cut) >= a.Hold):
		s.Limit, s.Cut = max(a.Floor, rate.Limit(float64(s.Limit)*a.Decrease)), now
	case sig == Succeeded:
		s.Limit = min(a.Ceiling, s.Limit+a.Increase)
	}
	return s
}

// Budget paces one class of requests (reads or writes) of one user: every
// worker waits on the same token bucket, and a 429 any of them sees slows
// all of them (AIMD). Its methods are safe for concurrent use.
type Budget struct {
	lim  *rate.Limiter
	aimd AIMD
	now  func() time.Time
	mu   sync.Mutex
	st   State
	// reserve is how many tokens normal requests leave to urgent ones
	// (WaitPriority); wmu serialises normal requests' check and take.
	reserve int
	wmu     sync.Mutex
	// spacing is the least time between two background requests' starts
	// while the bucket is not full, lastBg the last one's (SetSpacing).
	spacing time.Duration
	lastBg  time.Time
	// quota starts at most in any span of window; starts are the newest
	// starts, oldest first (SetWindow).
	quota  int
	window time.Duration
	starts []time.Time
	// sleep waits d or until ctx ends (Sleep; tests wait on a condition).
	sleep func(ctx context.Context, d time.Duration) error
}

// NewBudget returns a budget of one request per every (negative: no
// pacing), bursting to burst, tuned by DefaultAIMD; now is the clock of
// its decisions (nil: time.Now). Waiting is on the wall clock, as
// rate.Limiter waits.
func NewBudget(every time.Duration, burst int, now func() time.Time) *Budget {
	if now == nil {
		now = time.Now
	}
	limit := rate.Every(every)
	if every < 0 {
		limit, burst = rate.Inf, 0
	}
	return &Budget{lim: rate.NewLimiter(limit, burst), aimd: DefaultAIMD(limit), now: now, st: State{Limit: limit}, sleep: Sleep}
}

// Wait blocks until the budget lets one request start, or ctx ends: it
// queues as an urgent request does (WaitPriority).
func (b *Budget) Wait(ctx context.Context) error {
	return b.queue(ctx)
}

// SetReserve keeps n tokens for urgent requests (WaitPriority): normal
// requests start only while more are left. It is clamped to burst-1, so
// a normal request can always start once the bucket is full.
func (b *Budget) SetReserve(n int) {
	b.wmu.Lock()
	defer b.wmu.Unlock()
	b.reserve = max(0, min(n, b.lim.Burst()-1))
}

// Observe tells the budget how a request was answered.
func (b *Budget) Observe(sig Signal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	next := b.aimd.Next(b.st, sig, b.now())
	if next.Limit != b.st.Limit {
		b.lim.SetLimit(next.Limit)
	}
	b.st = next
}

// Headroom is how many requests could start now without waiting (the
// reserve for urgent requests included).
func (b *Budget) Headroom() int {
	if b.lim.Limit() == rate.Inf {
		return int(^uint(0) >> 1)
	}
	return max(int(b.lim.Tokens()), 0)
}

// Tokens is the budget's tokens now: how many requests could start now
// without waiting, negative while requests wait for it, +Inf unpaced.
// It is what a pool compares to choose the account with most headroom.
func (b *Budget) Tokens() float64 {
	if b.lim.Limit() == rate.Inf {
		return math.Inf(1)
	}
	return b.lim.Tokens()
}

// Snapshot is the budget's current state and its configured ceiling.
func (b *Budget) Snapshot() (State, rate.Limit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.st, b.aimd.Ceiling
}
