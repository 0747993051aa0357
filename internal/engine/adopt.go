package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/internal/failpoint"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// DefaultAdoptUnit is how many rows one unit of an adoption commits
// (AdoptRequest.UnitSize); MaxAdoptUnit bounds it.
const (
	DefaultAdoptUnit = 500
	MaxAdoptUnit     = 5000
)

// AdoptRequest asks to adopt a tab people kept (Engine.Adopt,
// PreviewAdoption): the tab's title, the declared entity its rows
// become, explicit column rules (header text → field, or "-" to set a
// column aside; see layout.MapHeader), the text fields whose numbers are
// adopted as their decimal text (cell.DecodeAdopted), a dry run, and
// how many rows one unit commits (0: DefaultAdoptUnit).
type AdoptRequest struct {
	Tab, Entity   string
	Map           map[string]string
	NumbersAsText []string
	DryRun        bool
	UnitSize      int
}

// AdoptReport is what an adoption found and did. Columns is every column
// of the tab and how it maps; Missing the declared fields no column holds
// (created records get their zero value, or null when nullable); Rows
// every data row's outcome in sheet order (Blank counts the rows left
// out because no mapped cell holds anything). KeptAs is the title the
// tab is kept under (on a dry run: would be); Renamed says this run
// renamed it. Units and Events are what the run committed; Quarantined
// and Cleared the quarantine records it recorded and cleared.
type AdoptReport struct {
	Tab, Entity, KeptAs                 string
	DryRun, Renamed                     bool
	Columns                             []layout.ColumnMap
	Missing                             []string
	Rows                                []aggregates.AdoptDecision
	Created, Unchanged, Skipped, Blank  int
	Units, Events, Quarantined, Cleared int
}

// adoption is one adoption in progress.
type adoption struct {
	req    AdoptRequest
	src    adoptSource
	tab    *sheetsio.PlainTab
	plan   *aggregates.AdoptPlan
	report AdoptReport
	// mark is the adoption's mark in the store directory (adoptmark.go),
	// created the rows its units committed, and tabKept that the tab was
	// found kept (renamed) already.
	mark    *AdoptMark
	created int
	tabKept bool
}

// adoptSource is what planning an adoption reads: the tab through the
// client, the entity's shape and the store's own tab names, and the
// current state of the tab's keys.
type adoptSource struct {
	adopter     sheetsio.TabAdopter
	spreadsheet string
	shape       events.EntityShape
	reserved    []string
	states      func(entity string, keys []string) (map[string]aggregates.EntityState, error)
}

// Adopt adopts a tab people kept into the declared entity req.Entity
// (docs/adopt.md): it reads the tab once, maps
// its columns by header, decodes every row with the cell rules of polling
// and decides each (create, unchanged, skip). A dry run stops there and
// writes nothing. A real run commits the created rows in units of
// UnitSize (actor adopt, create only), quarantines the skipped rows on
// the kept tab's title with their reasons, then renames the tab (fenced,
// nothing else of it touched) to sheetsio.KeptTitle; the System and Input
// tabs fill through the outbox as for any commit. A run interrupted
// anywhere can be run again: rows already adopted are unchanged, the
// quarantine is idempotent, and once the tab is renamed a second run is
// ErrAdoptTabAdopted. Errors: ErrAdoptNeedsSync, ErrAdoptEntityNotDeclared,
// ErrAdoptTabReserved, ErrAdoptTabNotFound, ErrAdoptTabAdopted,
// ErrAdoptTabChanged, layout's ErrAdopt… (header), read, commit and
// write errors.
func (e *Engine) Adopt(ctx context.Context, req AdoptRequest) (AdoptReport, error) {
	if e.adoptGuard != nil {
		if err := e.adoptGuard(ctx, req.Entity); err != nil {
			return AdoptReport{}, err
		}
	}
	src, err := e.adoptSource(req)
	if err != nil {
		return AdoptReport{}, err
	}
	a, err := planAdoption(ctx, src, req)
	if err != nil && a != nil && a.tabKept && !req.DryRun {
		err = errors.Join(err, e.removeAdoptMark(req.Tab)) // a run killed after its rename finished it
	}
	if err != nil || req.DryRun {
		return a.reportOrZero(err)
	}
	done, err := e.markAdoption(a)
	if err != nil {
		return a.report, err
	}
	defer done()
	for _, step := range []func(context.Context, *adoption) error{e.commitAdopted, e.quarantineAdopted, e.keepAdopted} {
		if err := step(ctx, a); err != nil {
			return a.report, err
		}
	}
	if err := e.removeAdoptMark(req.Tab); err != nil {
		return a.report, err
	}
	e.log.Info("adopted a tab", "entity", req.Entity, "created", a.report.Created, "unchanged", a.report.Unchanged,
		"skipped", a.report.Skipped, "quarantined", a.report.Quarantined, "units", a.report.Units)
	return a.report, nil
}

func (a *adoption) reportOrZero(err error) (AdoptReport, error) {
	if err != nil || a == nil {
		return AdoptReport{}, err
	}
	return a.report, nil
}

// adoptSource checks what an adoption needs of the open store.
func (e *Engine) adoptSource(req AdoptRequest) (adoptSource, error) {
	if e.sync == nil {
		return adoptSource{}, fmt.Errorf("%w: open the store with sync options for the spreadsheet", ErrAdoptNeedsSync)
	}
	ad, ok := e.sync.cfg.Provider.(sheetsio.TabAdopter)
	if !ok {
		return adoptSource{}, fmt.Errorf("%w: the sync provider cannot read or rename a tab", ErrAdoptNeedsSync)
	}
	shape, err := declaredShape(e.reg, req.Entity)
	if err != nil {
		return adoptSource{}, err
	}
	return adoptSource{adopter: ad, spreadsheet: e.entityTarget(req.Entity).cfg.SpreadsheetID, shape: shape, reserved: e.sheet.Schema.TabNames(),
		states: e.adoptStates}, nil
}

// declaredShape is entity's shape in reg, or ErrAdoptEntityNotDeclared
// naming the entities reg declares.
func declaredShape(reg *Registry, entity string) (events.EntityShape, error) {
	if s, ok := reg.Shape(entity); ok {
		return s, nil
	}
	var names []string
	for _, s := range reg.Shapes() {
		names = append(names, s.Name)
	}
	return events.EntityShape{}, fmt.Errorf("%w: the store declares no entity %s (it declares: %s); open it once with the application that declares it (hikoutei.Open with hikoutei.Entity[T](%[2]s)), then adopt",
		ErrAdoptEntityNotDeclared, echo.Quote(entity), strings.Join(names, ", "))
}

// adoptStates reads the state of keys of entity on the writer.
func (e *Engine) adoptStates(entity string, keys []string) (map[string]aggregates.EntityState, error) {
	out := make(map[string]aggregates.EntityState, len(keys))
	err := e.onWriter(func() error {
		for _, k := range keys {
			st, err := e.proj.EntityState(entity, k)
			if err != nil {
				return err
			}
			out[k] = st
		}
		return nil
	})
	return out, err
}

// planAdoption reads the tab and decides every row.
func planAdoption(ctx context.Context, src adoptSource, req AdoptRequest) (*adoption, error) {
	a := &adoption{req: req, src: src, report: AdoptReport{Tab: req.Tab, Entity: req.Entity, KeptAs: sheetsio.KeptTitle(req.Tab), DryRun: req.DryRun}}
	if slices.Contains(src.reserved, req.Tab) {
		return nil, fmt.Errorf("%w: %s is one of the store's own tabs", ErrAdoptTabReserved, echo.Name(req.Tab))
	}
	tab, err := src.adopter.ReadPlainTab(ctx, src.spreadsheet, req.Tab)
	if err != nil {
		return nil, err
	}
	if err := a.checkTab(tab); err != nil {
		a.tabKept = !tab.Found
		return a, err
	}
	a.tab = tab
	rows, err := a.decode()
	if err != nil {
		return nil, err
	}
	return a, a.decide(rows)
}

// checkTab refuses a tab that is missing, adopted already, or whose kept
// title another tab has.
func (a *adoption) checkTab(t *sheetsio.PlainTab) error {
	kept := a.report.KeptAs
	switch {
	case !t.Found && slices.Contains(t.Titles, kept):
		return fmt.Errorf("%w: %s was adopted already; its rows are kept in the tab %s (to import rows fixed there, adopt that tab)",
			ErrAdoptTabAdopted, echo.Name(a.req.Tab), echo.Quote(kept))
	case !t.Found:
		return fmt.Errorf("%w: the spreadsheet has no tab titled %s", ErrAdoptTabNotFound, echo.Quote(a.req.Tab))
	case kept != a.req.Tab && slices.Contains(t.Titles, kept):
		return fmt.Errorf("%w: a tab titled %s exists already, so %s cannot be kept under that title (adopt that tab, or rename one of them)",
			ErrAdoptTabAdopted, echo.Quote(kept), echo.Name(a.req.Tab))
	}
	return nil
}

// decide reads the state of every usable key and decides every row.
func (a *adoption) decide(rows []aggregates.AdoptRow) error {
	mapped := a.mappedFields()
	a.plan = aggregates.NewAdoptPlan(a.src.shape.Name, a.src.shape.PK, mapped, rows)
	states, err := a.src.states(a.src.shape.Name, a.keys(a.allRows()))
	if err != nil {
		return err
	}
	a.report.Rows = make([]aggregates.AdoptDecision, a.plan.Len())
	for i := range a.plan.Len() {
		a.report.Rows[i] = a.plan.Decide(i, states[a.plan.Key(i)])
	}
	a.count()
	return nil
}

func (a *adoption) allRows() []int {
	out := make([]int, a.plan.Len())
	for i := range out {
		out[i] = i
	}
	return out
}

// keys are the usable keys of plan rows rows.
func (a *adoption) keys(rows []int) []string {
	var out []string
	for _, i := range rows {
		if k := a.plan.Key(i); k != "" {
			out = append(out, k)
		}
	}
	return out
}

func (a *adoption) mappedFields() []string {
	var out []string
	for _, c := range a.report.Columns {
		if c.Field != "" && c.Field != a.src.shape.PK {
			out = append(out, c.Field)
		}
	}
	return out
}

// count sets the report's totals from its rows.
func (a *adoption) count() {
	r := &a.report
	r.Created, r.Unchanged, r.Skipped = 0, 0, 0
	for _, d := range r.Rows {
		switch d.Outcome {
		case aggregates.AdoptCreate:
			r.Created++
		case aggregates.AdoptUnchanged:
			r.Unchanged++
		default:
			r.Skipped++
		}
	}
}

// commitAdopted commits the created rows in units (failpoint
// adopt.after_unit after each). A unit that finds a key created since
// the plan read it (ErrEntityExists: nothing of it committed) is decided
// again with fresh states.
func (e *Engine) commitAdopted(ctx context.Context, a *adoption) error {
	size := a.req.UnitSize
	if size <= 0 {
		size = DefaultAdoptUnit
	}
	creates := a.rowsWith(aggregates.AdoptCreate)
	for start := 0; start < len(creates); start += size {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := e.commitAdoptUnit(a, creates[start:min(start+size, len(creates))]); err != nil {
			return err
		}
		a.mark.Created, a.mark.Units = a.created, a.report.Units
		if err := e.writeAdoptMark(a.mark); err != nil {
			return err
		}
		failpoint.Inject(failpoint.AdoptAfterUnit)
	}
	return nil
}

// commitAdoptUnit commits one unit of created rows, deciding its rows
// again (at most three times) while a key appears under it.
func (e *Engine) commitAdoptUnit(a *adoption, rows []int) error {
	for try := 0; ; try++ {
		var cmds []Command
		for _, i := range rows {
			if a.report.Rows[i].Outcome == aggregates.AdoptCreate {
				p := a.plan.AdoptCommand(i)
				cmds = append(cmds, Command{Entity: p.Entity, ID: p.ID, Values: p.Values, Actor: p.Actor, CreateOnly: p.CreateOnly})
			}
		}
		if len(cmds) == 0 {
			return nil
		}
		res, err := e.Commit(cmds)
		if err == nil {
			a.created += len(cmds)
			a.report.Units++
			a.report.Events += res.Events
			return nil
		}
		if !errors.Is(err, aggregates.ErrEntityExists) || try == 2 {
			return err
		}
		if err := a.redecide(rows); err != nil {
			return err
		}
	}
}

// redecide decides rows again against fresh states.
func (a *adoption) redecide(rows []int) error {
	states, err := a.src.states(a.src.shape.Name, a.keys(rows))
	if err != nil {
		return err
	}
	for _, i := range rows {
		a.report.Rows[i] = a.plan.Decide(i, states[a.plan.Key(i)])
	}
	a.count()
	return nil
}

func (a *adoption) rowsWith(o aggregates.AdoptOutcome) []int {
	var out []int
	for i, d := range a.report.Rows {
		if d.Outcome == o {
			out = append(out, i)
		}
	}
	return out
}

// quarantineAdopted records the skipped rows as quarantine of the kept
// tab (and clears its records no row shows any more) in one fenced commit.
func (e *Engine) quarantineAdopted(_ context.Context, a *adoption) error {
	var skipped []aggregates.AdoptDecision
	for _, i := range a.rowsWith(aggregates.AdoptSkip) {
		skipped = append(skipped, a.report.Rows[i])
	}
	tab := a.report.KeptAs
	return e.onWriter(func() error {
		active, err := e.proj.ActiveQuarantine(tab)
		if err != nil {
			return err
		}
		version, err := e.writer().Log().StreamVersion(events.InboundStream(tab))
		if err != nil {
			return err
		}
		now := e.cfg.Clock.Now()
		ch := a.plan.Quarantine(tab, skipped, active, version, now)
		a.countQuarantine(ch)
		return e.commitWorker(ch, now)
	})
}

func (a *adoption) countQuarantine(ch aggregates.Changes) {
	for _, ap := range ch.Appends {
		for _, ev := range ap.Events {
			switch ev.Payload.(type) {
			case events.RowQuarantined:
				a.report.Quarantined++
			case events.RowQuarantineCleared:
				a.report.Cleared++
			}
		}
	}
	a.report.Events += ch.Count()
}

// keepAdopted renames the tab to its kept title, fenced by this writer's
// authority, once the spreadsheet is provisioned (a kept tab adopted
// again is not renamed).
func (e *Engine) keepAdopted(ctx context.Context, a *adoption) error {
	if a.report.KeptAs == a.req.Tab {
		return nil
	}
	s := e.entityTarget(a.req.Entity)
	if _, err := e.provisionTarget(ctx, s); err != nil {
		return err
	}
	s.mu.Lock()
	wb := s.workbook
	s.mu.Unlock()
	err := a.src.adopter.RenameTab(ctx, wb, a.tab.SheetID, a.req.Tab, a.report.KeptAs, e.Fence())
	if errors.Is(err, sheetsio.ErrTabChanged) {
		return fmt.Errorf("%w: %w; adopt again", ErrAdoptTabChanged, err)
	}
	a.report.Renamed = err == nil
	return err
}

// SetAdoptGuard sets what Adopt asks first, whoever calls it (the root
// package's Store.Adopt, hikoutei adopt): an error refuses the adoption
// before anything is read or written (the root refuses an entity with
// personal fields, whose values would reach the log unsealed). Set once,
// while the store opens.
func (e *Engine) SetAdoptGuard(f func(ctx context.Context, entity string) error) { e.adoptGuard = f }
