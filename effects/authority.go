package effects

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// ErrAuthorityHeld: another store holds a live authority on the
// spreadsheet (I05: the writer's epoch at the sync target). Dispatching waits
// until that authority expires; it is not an error of this store.
var ErrAuthorityHeld = errors.New("sync_authority_held")

// DefaultAuthorityTTL: an authority row not refreshed for this long has
// expired and may be taken over by another store.
const DefaultAuthorityTTL = 2 * time.Minute

// authority is the dispatcher's view of the spreadsheet authority.
type authority struct {
	owned     bool      // this store has held the authority since start
	refreshed time.Time // when this store last wrote it
}

// ClaimAuthority runs the authority check now (Store.Provision calls it
// before the first write of a run). Errors as checkAuthority.
func (d *Dispatcher) ClaimAuthority(ctx context.Context) error { return d.checkAuthority(ctx) }

// checkAuthority enforces the lease at the sync target before a dispatch:
// it claims an absent or expired authority, refreshes its own every
// AuthorityTTL/3, refuses while another store's is live
// (ErrAuthorityHeld), and stops the worker (ErrDivergence) when the
// authority it held now names another store or a newer epoch — the
// divergence check that covers the window the lease cannot (I05).
func (d *Dispatcher) checkAuthority(ctx context.Context) error {
	return d.checkAuthorityAfter(ctx, d.cfg.AuthorityTTL/3)
}

// checkAuthorityAfter is checkAuthority for an authority this store
// refreshed less than age ago: nothing to do.
func (d *Dispatcher) checkAuthorityAfter(ctx context.Context, age time.Duration) error {
	now := d.cfg.Clock.Now()
	if d.auth.owned && now.Sub(d.auth.refreshed) < age {
		return nil
	}
	a, err := d.cfg.Provider.ReadAuthority(ctx, d.cfg.Workbook)
	if err != nil {
		return err
	}
	mine := d.cfg.Outbox.Fence()
	switch {
	case !a.Present || a.StoreID == mine.StoreID && a.Epoch < mine.Epoch:
		return d.claimAuthority(ctx, mine, now, "vacant or older epoch of this store")
	case a.StoreID == mine.StoreID && a.Epoch == mine.Epoch && a.Token == mine.Token:
		return d.claimAuthority(ctx, mine, now, "")
	case a.StoreID == mine.StoreID:
		// This store at an epoch not below ours under another token: a
		// writer this one does not know of (I05: never overwritten).
		return d.divergedAhead(&AuthorityAheadError{StoreID: a.StoreID, Epoch: a.Epoch, Mine: mine.Epoch, Owned: d.auth.owned})
	case d.auth.owned:
		return d.diverged(fmt.Sprintf("the spreadsheet authority now names store %s epoch %d", a.StoreID, a.Epoch))
	case now.Sub(a.UpdatedAt) >= d.cfg.AuthorityTTL:
		return d.claimAuthority(ctx, mine, now, fmt.Sprintf("took over the expired authority of store %s", a.StoreID))
	}
	d.C.Held.Store(true)
	return fmt.Errorf("%w: store %s holds the spreadsheet (epoch %d) until %s", ErrAuthorityHeld, a.StoreID, a.Epoch,
		a.UpdatedAt.Add(d.cfg.AuthorityTTL).UTC().Format(time.RFC3339))
}

// refreshDue reports whether the refresh of the authority this store
// holds is due at now: ttl/3 after the last. A pass with effects to send
// carries it in its own preflight read and batchUpdate
// (sheetsio.Batch.Refresh) instead of reading and writing the authority
// on its own before it claims (two reads and a write its commits waited
// for); a pass with nothing to send, or any pass once ttl/2 passed
// without a refresh riding (rideAge), refreshes it on its own
// (checkAuthority). Pure.
func refreshDue(a authority, now time.Time, ttl time.Duration) bool {
	return a.owned && now.Sub(a.refreshed) >= ttl/3
}

// rideAge is how old the last refresh may be for a pass to leave the
// refresh to its dispatch (refreshDue).
func rideAge(ttl time.Duration) time.Duration { return ttl / 2 }

// rideRefresh asks the pass's first lane to refresh the authority when
// it is due (refreshDue), and returns when the pass asked it (zero: not).
func (d *Dispatcher) rideRefresh(lanes []*lane) time.Time {
	now := d.cfg.Clock.Now()
	if !refreshDue(d.auth, now, d.cfg.AuthorityTTL) {
		return time.Time{}
	}
	for _, l := range lanes {
		if l.head {
			l.batch.Refresh = true
		}
	}
	return now
}

// rodeRefresh records the refresh a pass's lanes carried (asked at at;
// zero: none): the authority counts as refreshed then once a lane wrote it.
func (d *Dispatcher) rodeRefresh(lanes []*lane, at time.Time) {
	if at.IsZero() {
		return
	}
	for _, l := range lanes {
		if l.batch.Refresh && l.err == nil && l.res != nil && l.res.Refreshed {
			d.auth.refreshed = at
		}
	}
}

func (d *Dispatcher) claimAuthority(ctx context.Context, f sheetsio.Fence, now time.Time, note string) error {
	if err := d.cfg.Provider.WriteAuthority(ctx, d.cfg.Workbook, f); err != nil {
		return err
	}
	if note != "" {
		d.cfg.Logger.Info("spreadsheet authority claimed", "how", note, "epoch", f.Epoch)
	}
	d.auth = authority{owned: true, refreshed: now}
	d.C.Held.Store(false)
	return nil
}

// diverged records the divergence and stops the worker.
func (d *Dispatcher) diverged(reason string) error {
	err := fmt.Errorf("%w: %s", ErrDivergence, reason)
	if rerr := d.cfg.Outbox.RecordDivergence(d.cfg.Spreadsheet, reason); rerr != nil {
		return errors.Join(err, fenced(rerr))
	}
	return err
}

// divergedAhead is diverged for an authority of this store at an epoch
// not below the writer's: the error is the *AuthorityAheadError.
func (d *Dispatcher) divergedAhead(ahead *AuthorityAheadError) error {
	if rerr := d.cfg.Outbox.RecordDivergence(d.cfg.Spreadsheet, ahead.reason()); rerr != nil {
		return errors.Join(ahead, fenced(rerr))
	}
	return ahead
}

// AuthorityAheadError: the spreadsheet authority names this store at an
// epoch not below the writer's, under another fencing token (I05). A
// writer this one does not know of wrote it: a newer writer of the store
// (replicated mode: a takeover), another copy of the store directory, or
// a run whose records this log lost (an older log.db restored without
// the read model that would have kept its epoch). The worker stops; a
// store that takes its lease again takes an epoch above Epoch (the
// engine records it: events.Log.RaiseEpochFloor). It wraps ErrDivergence.
type AuthorityAheadError struct {
	StoreID string
	Epoch   int64 // the epoch the authority names
	Mine    int64 // this writer's epoch
	Owned   bool  // this writer had claimed the authority in this run
}

func (e *AuthorityAheadError) reason() string {
	what := "names"
	if e.Owned {
		what = "now names"
	}
	return fmt.Sprintf("the spreadsheet authority %s store %s epoch %d: this store, at an epoch not below this writer's (%d), "+
		"written by a writer this one does not know of (a run whose records log.db lost, e.g. an older log.db restored, "+
		"another copy of this store directory, or a newer writer that took the store over); sync stopped without writing. "+
		"If no other writer of this store runs, restart the store: it takes an epoch above %d",
		what, e.StoreID, e.Epoch, e.Mine, e.Epoch)
}

func (e *AuthorityAheadError) Error() string { return ErrDivergence.Error() + ": " + e.reason() }

// Unwrap returns ErrDivergence.
func (e *AuthorityAheadError) Unwrap() error { return ErrDivergence }

// headShown tells Config.HeadShown what the chain_head cell showed a
// dispatch that published batch's head.
func (d *Dispatcher) headShown(batch sheetsio.Batch, res *sheetsio.DispatchResult) {
	if d.cfg.HeadShown == nil || res == nil || res.HeadShown == nil || batch.Head == nil {
		return
	}
	d.cfg.HeadShown(*res.HeadShown, *batch.Head)
}

// chainHead samples the head a dispatch publishes (Config.ChainHead); nil
// when there is none to publish.
func (d *Dispatcher) chainHead() *sheetsio.ChainHead {
	if d.cfg.ChainHead == nil {
		return nil
	}
	h, err := d.cfg.ChainHead()
	if err != nil {
		d.cfg.Logger.Debug("chain head not published", "err", err)
		return nil
	}
	return &h
}
