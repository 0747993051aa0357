package evolve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/above/lab/campaign"
	"github.com/hikoutei/hikoutei-go/sheetsio/gsheets"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// runner is one run: its store, the spreadsheet it syncs to, the person
// at that spreadsheet, the application's workload and the shape it is on.
type runner struct {
	c       *evolveCampaign
	run     int
	dir     string
	rng     *rand.Rand
	sheetID string
	prov    *gsheets.Provider
	s       *hikoutei.Store
	item    *shape // Item's current version
	otherOn bool   // Other is declared
	m       *model
	work    *workload
	who     *person
	ed      *edits
	next    uint64                 // the next log sequence to scan
	head    uint64                 // the log head last seen
	changed []events.SchemaChanged // schema.changed events scanned since the last Open
	version int                    // migrations made (their versions)
	history []string               // acts, for the report
	dups    map[string]bool        // tab/anchor seen twice (counted once)
	silent  bool                   // health said ok after the last act while a tab differed (reported once)
	quiet   campaign.Quiet
	// converged is canonical state as the comparison that found the
	// sheet equal to it read it.
	converged campaign.Want
}

// oneRun: the acts from a random first version, then quiescence and the
// checks.
func (c *evolveCampaign) oneRun(ctx context.Context, run int, dir string) error {
	rng := rand.New(rand.NewPCG(c.cfg.Seed, uint64(run)))
	m := newModel()
	r := &runner{c: c, run: run, dir: dir, rng: rng, sheetID: fmt.Sprintf("evolve-%d", run), m: m, ed: newEdits(), next: 1,
		work: &workload{run: run, m: m, rng: rng}, item: shapes[firstVersions[rng.IntN(len(firstVersions))]]}
	r.who = &person{p: c.sheets.Emu.Person(r.sheetID), rng: rng, run: run}
	if err := r.open(ctx, r.defs(r.item, r.otherOn), nil); err != nil {
		return fmt.Errorf("open %s: %w", r.item.name, err)
	}
	defer r.shutdown()
	for range c.cfg.Steps {
		r.countDuplicates()
		if err := r.step(ctx); err != nil {
			return err
		}
		if err := r.sampleHealth(ctx); err != nil {
			return err
		}
		select { // the workload's rate, not synchronisation
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(rng.IntN(30)) * time.Millisecond):
		}
	}
	took, ok, err := r.waitConverged(ctx)
	if err != nil {
		return err
	}
	if ok {
		fmt.Fprintf(c.out, "evolve: run %d: %s%s, %d items, %d edits, canonical %s after the last act (%v)\n", run, r.item.name,
			map[bool]string{true: "+Other"}[r.otherOn], len(r.m.recs[itemEntity]), len(r.ed.all), took.Round(time.Millisecond), r.lastActs())
	}
	return r.finish(ctx)
}

// firstVersions are the versions a run may start from.
var firstVersions = []string{"V1", "V1", "V2", "V3", "V3", "V4", "V7", "V9", "VK"}

func (r *runner) lastActs() []string { return r.history[max(0, len(r.history)-4):] }

// defs are the declarations of a store on item (and Other when on).
func (r *runner) defs(item *shape, otherOn bool) []hikoutei.EntityDef {
	out := []hikoutei.EntityDef{item.def}
	if otherOn {
		out = append(out, other.def)
	}
	return out
}

// current are the shapes the store declares now.
func (r *runner) current() []*shape {
	if r.otherOn {
		return []*shape{r.item, other}
	}
	return []*shape{r.item}
}

func (r *runner) entities() []string {
	var out []string
	for _, sh := range r.current() {
		out = append(out, sh.entity)
	}
	return out
}

// open opens the store with defs (and migrations); the error is Open's.
func (r *runner) open(ctx context.Context, defs []hikoutei.EntityDef, migrations []hikoutei.Migration) error {
	if r.prov == nil {
		prov, err := campaign.Provider(ctx, r.c.sheets.URL, r.c.cfg.Logger)
		if err != nil {
			return err
		}
		r.prov = prov
	}
	opts := campaign.StoreOptions("evolve", r.c.cfg.Logger, r.sheetID, r.prov, r.c.cfg.ReconcileInterval)
	opts.Migrations = migrations
	s, err := hikoutei.Open(ctx, r.dir, opts, defs...)
	if err != nil {
		return err
	}
	r.s, r.changed = s, nil
	return r.scan(ctx)
}

// shutdown closes the store (once), reading the log to its head first.
func (r *runner) shutdown() error {
	if r.s == nil {
		return nil
	}
	scanErr := r.scan(context.Background())
	err := r.s.Close()
	r.s = nil
	if errors.Is(err, hikoutei.ErrStoreClosed) {
		err = nil
	}
	return errors.Join(scanErr, err)
}

// scan reads the log from r.next to its head: the outcomes of the
// person's edits, the conflicts opened, the shape changes recorded.
func (r *runner) scan(ctx context.Context) error {
	for ev, err := range r.s.Events(ctx, r.next) {
		if err != nil {
			return fmt.Errorf("read the log: %w", err)
		}
		r.next, r.head = ev.Seq+1, ev.Seq
		switch p := ev.Payload.(type) {
		case events.ObservationAccepted:
			r.c.res.Accepted++
			for _, v := range p.Fields {
				r.ed.settle(v, outAccepted)
			}
		case events.CandidateDetected:
			r.ed.settle(p.CandidateValue, outConflict)
		case events.ConflictOpened:
			r.c.res.Conflicts++
			r.ed.settle(p.SheetValue, outConflict)
		case events.RowQuarantined:
			r.ed.quarantined(p.Tab, p.Anchor, ev.Seq)
		case events.SchemaChanged:
			r.changed = append(r.changed, p)
		}
	}
	return nil
}

// step is one act: the application commits (most steps), the person
// edits an Input cell, someone resolves a conflict, the store restarts,
// or it restarts with a shape change.
func (r *runner) step(ctx context.Context) error {
	if err := r.scan(ctx); err != nil {
		return err
	}
	switch x := r.rng.IntN(100); {
	case x < 48:
		r.act("commit")
		return r.commit(ctx)
	case x < 68:
		return r.edit(ctx)
	case x < 72:
		return r.resolveOne(ctx)
	case x < 80:
		r.act("restart")
		r.c.res.Restarts++
		return r.restart(ctx)
	default:
		return r.change(ctx)
	}
}

func (r *runner) act(what string) {
	r.history = append(r.history, what)
	if r.c.cfg.Verbose {
		fmt.Fprintf(r.c.out, "evolve: run %d %s act %d %s (head %d)\n", r.run, time.Now().Format("15:04:05.000"), len(r.history), what, r.head)
	}
}

// commit is one commit of the workload, on Item or (one time in three
// when declared) on Other.
func (r *runner) commit(ctx context.Context) error {
	sh := r.item
	if r.otherOn && r.rng.IntN(3) == 0 {
		sh = other
	}
	r.c.res.Commits++
	return r.work.step(ctx, r.s, sh)
}

// edit has the person type a new value into a user cell of a live
// record's Input row whose last edit has an outcome; half the time the
// application then changes the same field of that record (a conflict
// when it commits before the poll sees the edit).
func (r *runner) edit(ctx context.Context) error {
	sh, f, ok := r.userField()
	if !ok {
		return nil
	}
	anchor := r.typeEdit(sh, f, false)
	if anchor == "" || r.rng.IntN(2) == 0 || f.kind != kindString {
		return nil
	}
	r.act("edit+commit")
	return r.work.set(ctx, r.s, sh, anchor, f, fmt.Sprintf("app-%d", r.rng.IntN(1000)))
}

// userField draws a field people edit on a declared entity.
func (r *runner) userField() (*shape, field, bool) {
	cur := r.current()
	sh := cur[r.rng.IntN(len(cur))]
	fs := sh.userFields()
	if len(fs) == 0 {
		return nil, field{}, false
	}
	return sh, fs[r.rng.IntN(len(fs))], true
}

// typeEdit types one edit into f of sh's Input tab; it returns the
// anchor ("" when nothing was typed).
func (r *runner) typeEdit(sh *shape, f field, closed bool) string {
	tab := layout.InputTabName(sh.entity)
	anchor, v := r.who.typeInto(tab, f, func(anchor string, rows [][]string) bool {
		r.ed.settleKept(tab, rows)
		_, live := r.m.recs[sh.entity][anchor]
		return live && r.ed.pending[cellKey(sh.entity, anchor, f.name)] == nil
	})
	if v == "" {
		return ""
	}
	r.act(fmt.Sprintf("edit%s %s %s.%s=%s", map[bool]string{true: "(closed)"}[closed], tab, anchor, f.name, v))
	r.ed.add(&edit{entity: sh.entity, tab: tab, anchor: anchor, field: f.name, value: v, seq: r.head, closed: closed, act: len(r.history) - 1})
	r.m.typedBy(sh.entity, anchor, f.name, v)
	return anchor
}

// editWhileClosed: while the store is closed the person may go on
// editing (against the layout the tab shows).
func (r *runner) editWhileClosed() {
	for range r.rng.IntN(3) {
		if sh, f, ok := r.userField(); ok {
			r.typeEdit(sh, f, true)
		}
	}
}

// resolveOne resolves an open conflict, as a person deciding in the
// application would: keep the system's value, or use the sheet's.
func (r *runner) resolveOne(ctx context.Context) error {
	open, err := r.s.Conflicts(ctx, hikoutei.ConflictOpen)
	if err != nil || len(open) == 0 {
		return err
	}
	c := open[r.rng.IntN(len(open))]
	how := []hikoutei.Resolution{hikoutei.KeepSystem, hikoutei.UseSheet}[r.rng.IntN(2)]
	r.act(fmt.Sprintf("resolve %s %s.%s %s", c.Entity, c.EntityID, c.Field, how))
	return resolved(r.s.ResolveConflict(ctx, c.ID, how))
}

// resolved is nil for a resolution that stood or was refused as a
// correct outcome (the conflict moved on meanwhile).
func resolved(_ hikoutei.AckResult, err error) error {
	for _, ok := range []error{hikoutei.ErrConflictStale, hikoutei.ErrConflictNotOpen, hikoutei.ErrConflictBlocked} {
		if errors.Is(err, ok) {
			return nil
		}
	}
	return err
}

// restart closes the store and opens it again with the same shapes
// (the person may edit meanwhile).
func (r *runner) restart(ctx context.Context) error {
	if err := r.shutdown(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	r.editWhileClosed()
	if err := r.open(ctx, r.defs(r.item, r.otherOn), nil); err != nil {
		return fmt.Errorf("reopen %s: %w", r.item.name, err)
	}
	if len(r.changed) > 0 {
		r.c.problem(&r.c.res.Misclassified, r.run, "reopened with the same shapes (%s), the log records a change: %+v", r.item.name, r.changed)
	}
	return nil
}

// countDuplicates counts each anchor a tab shows twice (once per run).
func (r *runner) countDuplicates() {
	tabs := append(campaign.EntityTabs(itemEntity, otherEntity), layout.ConflictsTab, layout.ReceiptsTab)
	for _, d := range campaign.Duplicates(r.c.sheets.Emu.Person(r.sheetID), tabs...) {
		if r.dups == nil {
			r.dups = map[string]bool{}
		}
		if !r.dups[d] {
			r.dups[d] = true
			r.c.problem(&r.c.res.Duplicates, r.run, "anchor %s shows twice", d)
		}
	}
}
