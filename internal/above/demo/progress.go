package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// DefaultStall is how long a wait of the demo may observe no progress
// before it fails (Config.Stall). It outlasts a full quota window of
// Google's model (60 requests a minute) with room to spare.
const DefaultStall = 2 * time.Minute

// waitFor re-checks cond every 100 ms until it reports done (or an
// error). A wait never ends on a fixed deadline: it fails (ErrStalled)
// only when nothing it observes has changed for cfg.Stall. Progress is
// any change of the read model's checkpoint, of the outbox counts by
// state, or of what cond reports (its state). With wake, it also wakes
// the pollers at most once a second (polls share Google's read quota with
// the dispatcher).
func (e *env) waitFor(ctx context.Context, what string, wake bool, cond func() (done bool, state string, err error)) error {
	var last string
	var woke time.Time
	since := time.Now()
	for {
		if bus := engine.Of(e.store).Bus(); wake && bus != nil && time.Since(woke) >= time.Second {
			bus.WakePoll()
			woke = time.Now()
		}
		done, state, err := cond()
		if err != nil || done {
			return err
		}
		fp, err := e.fingerprint()
		if err != nil {
			return err
		}
		if now := strings.TrimSpace(fp + " " + state); now != last {
			last, since = now, time.Now()
		} else if time.Since(since) >= e.cfg.Stall {
			return fmt.Errorf("%w: no progress for %s waiting for %s (%s)", ErrStalled, e.cfg.Stall, what, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fingerprint renders the store's progress: the read model's checkpoint
// and the outbox counts by state.
func (e *env) fingerprint() (string, error) {
	en := engine.Of(e.store)
	c, err := en.OutboxCounts()
	if err != nil {
		return "", err
	}
	fp := fmt.Sprintf("checkpoint=%d", en.Checkpoint())
	for _, s := range aggregates.EffectStates {
		if c[s] > 0 {
			fp += fmt.Sprintf(" %s=%d", s, c[s])
		}
	}
	return fp, nil
}

// waitSynced shows converged rows until the outbox holds nothing unsettled.
func (e *env) waitSynced(ctx context.Context) error {
	bar := e.bar(len(e.data), "sync")
	err := e.waitFor(ctx, "the sync", false, func() (bool, string, error) {
		c, err := engine.Of(e.store).OutboxCounts()
		if err != nil {
			return false, "", err
		}
		bar.Set(min(c[aggregates.EffectApplied]/2, int64(len(e.data))))
		return open(c) == 0, "", nil
	})
	if err != nil {
		bar.Abandon()
		return err
	}
	bar.Finish()
	return nil
}

// waitSettled waits, after the people's acts, until the outbox holds
// nothing unsettled again: its own phase ("settle"), counting the
// effects that were open when it began, so the sync phase's line is
// printed once.
func (e *env) waitSettled(ctx context.Context) error { return e.waitOutbox(ctx, "settle") }

// waitOutbox waits until the outbox holds nothing unsettled, as phase.
func (e *env) waitOutbox(ctx context.Context, phase string) error {
	c, err := engine.Of(e.store).OutboxCounts()
	if err != nil {
		return err
	}
	start := open(c)
	bar := e.bar(int(start), phase)
	err = e.waitFor(ctx, "the outbox to settle", false, func() (bool, string, error) {
		c, err := engine.Of(e.store).OutboxCounts()
		if err != nil {
			return false, "", err
		}
		n := open(c)
		bar.Set(max(start-n, 0))
		return n == 0, "", nil
	})
	if err != nil {
		bar.Abandon()
		return err
	}
	bar.Finish()
	return nil
}

// open counts effects not yet settled.
func open(c map[aggregates.EffectState]int64) int64 {
	n := int64(0)
	for _, s := range aggregates.Unsettled() {
		n += c[s]
	}
	return n
}

// awaitOutcomes waits until every act has reached an outcome and returns
// them in act order; an outcome outside an act's correct set fails at
// once (ErrUnexpectedOutcome).
func (e *env) awaitOutcomes(ctx context.Context, acts []act) ([]Outcome, error) {
	out := make([]Outcome, len(acts))
	err := e.waitFor(ctx, "the pollers to record every act's outcome", true, func() (bool, string, error) {
		done, state := true, ""
		err := e.withReadModel(ctx, func(rm *readModel) error {
			for i, a := range acts {
				r, err := a.observe(ctx, rm)
				if err != nil {
					return err
				}
				if r != "" && !a.allows(r) {
					return fmt.Errorf("%w: %s: %s (correct: %v)", ErrUnexpectedOutcome, a.what, r, a.outcomes)
				}
				out[i] = Outcome{Act: a.what, Result: r}
				done = done && r != ""
				state += fmt.Sprintf("[%s: %s]", a.what, orPending(r))
			}
			return nil
		})
		return done, state, err
	})
	return out, err
}

func orPending(r Result) Result {
	if r == "" {
		return "pending"
	}
	return r
}
