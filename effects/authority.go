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
	now := d.cfg.Clock.Now()
	if d.auth.owned && now.Sub(d.auth.refreshed) < d.cfg.AuthorityTTL/3 {
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
	case d.auth.owned || a.StoreID == mine.StoreID:
		return d.diverged(fmt.Sprintf("the spreadsheet authority now names store %s epoch %d", a.StoreID, a.Epoch))
	case now.Sub(a.UpdatedAt) >= d.cfg.AuthorityTTL:
		return d.claimAuthority(ctx, mine, now, fmt.Sprintf("took over the expired authority of store %s", a.StoreID))
	}
	return fmt.Errorf("%w: store %s holds the spreadsheet (epoch %d) until %s", ErrAuthorityHeld, a.StoreID, a.Epoch,
		a.UpdatedAt.Add(d.cfg.AuthorityTTL).UTC().Format(time.RFC3339))
}

func (d *Dispatcher) claimAuthority(ctx context.Context, f sheetsio.Fence, now time.Time, note string) error {
	if err := d.cfg.Provider.WriteAuthority(ctx, d.cfg.Workbook, f); err != nil {
		return err
	}
	if note != "" {
		d.cfg.Logger.Info("spreadsheet authority claimed", "how", note, "epoch", f.Epoch)
	}
	d.auth = authority{owned: true, refreshed: now}
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
