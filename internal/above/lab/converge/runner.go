package converge

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/mirrorcheck"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
)

// runner is one run: its store, the spreadsheet it syncs to, the person
// at that spreadsheet and the application's workload.
type runner struct {
	c       *damageCampaign
	run     int
	dir     string
	rng     *rand.Rand
	sheetID string
	work    *workload
	s       *hikoutei.Store
	prov    *gsheets.Provider
	who     *person
	acts    int
	history []Kind          // acts done, in order
	dups    map[string]bool // tab/anchor seen duplicated (counted once)
	silent  bool            // health said ok after a full reconciliation in this run (counted once)
	quiet   campaign.Quiet  // sync health after damage stopped
}

func (r *runner) open(ctx context.Context) error {
	if r.prov == nil {
		prov, err := campaign.Provider(ctx, r.c.sheets.URL, r.c.cfg.Logger)
		if err != nil {
			return err
		}
		r.prov = prov
	}
	opts := mirrorcheck.Options(campaign.StoreOptions("converge", r.c.cfg.Logger, r.sheetID, r.prov, r.c.cfg.ReconcileInterval))
	s, err := hikoutei.Open(ctx, r.dir, opts, Entity())
	if err != nil {
		return fmt.Errorf("open: %w", err)
	}
	r.s = s
	return nil
}

// close closes the store (once), adding up its repairs first.
func (r *runner) close() error {
	if r.s == nil {
		return nil
	}
	if d, _, _ := engine.Of(r.s).Workers(); d != nil {
		r.c.res.Repairs += d.C.Repaired.Load()
	}
	err := r.s.Close()
	r.s = nil
	return err
}

func (r *runner) person() *person {
	if r.who == nil {
		r.who = &person{p: r.c.sheets.Emu.Person(r.sheetID), rng: r.rng}
	}
	return r.who
}

// step is one act: the application commits (most steps), a person edits
// an Input cell or damages the spreadsheet, or the store restarts or
// switches spreadsheet.
func (r *runner) step(ctx context.Context) error {
	switch x := r.rng.IntN(100); {
	case x < 45:
		return r.work.step(ctx, r.s, r.rng)
	case x < 60:
		id, col := r.person().editInput()
		r.count(EditInputCells, id != "")
		if col == "notes" && r.rng.IntN(2) == 0 { // the application changes the same field before the poll: a conflict
			return r.work.touch(ctx, r.s, id, r.rng)
		}
	case x < 90:
		k := damageKinds[r.rng.IntN(len(damageKinds))]
		if k == ReplaceSpreadsheet {
			r.count(k, r.c.sheets.Emu.ReplaceSpreadsheet(r.sheetID) == nil)
			return nil
		}
		r.count(k, r.person().act(k))
	case x < 97:
		r.count(Restart, true)
		return r.restart(ctx)
	default:
		r.count(SwitchSpreadsheet, true)
		r.sheetID = fmt.Sprintf("converge-%d-%d", r.run, r.acts)
		r.who = nil
		return r.restart(ctx)
	}
	return nil
}

func (r *runner) count(k Kind, done bool) {
	if done {
		r.history = append(r.history, k)
		r.c.res.Acts[k]++
		r.acts++
	}
}

// restart closes the store and opens it again (on r.sheetID).
func (r *runner) restart(ctx context.Context) error {
	if err := r.close(); err != nil && !errors.Is(err, hikoutei.ErrStoreClosed) {
		return fmt.Errorf("close: %w", err)
	}
	return r.open(ctx)
}
