package demo

import (
	"context"
	"fmt"
	"text/tabwriter"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/engine"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// actAndVerify plays the people's part, waits for the pollers, then checks
// that every non-conflicted System row equals canonical state.
func (e *env) actAndVerify(ctx context.Context) (Summary, error) {
	sum := Summary{Rows: len(e.data), Dir: e.cfg.Dir, ReadModel: e.store.ReadModelPath(), ViewURL: e.url + "/"}
	outs, err := e.people(ctx)
	sum.Outcomes, sum.QuarantinedActs = outs, quarantinedActs(outs)
	if err != nil {
		return sum, err
	}
	err = e.withReadModel(ctx, func(rm *readModel) error {
		in, err := rm.inbound()
		sum.Conflicts, sum.Resolved, sum.ResolvedInSheet, sum.Quarantined = in.opened, in.resolved, in.inSheet, in.quarantined
		return err
	})
	if err != nil {
		return sum, err
	}
	if err := e.erase(ctx, &sum); err != nil {
		return sum, err
	}
	if err := e.verify(ctx, &sum); err != nil {
		return sum, err
	}
	c := e.emu.Counters(SpreadsheetID)
	sum.Requests = c.Reads + c.Writes
	return sum, nil
}

// people runs the people's acts, waits until each has reached one of its
// correct outcomes and reports which; then the application commits the
// collided field again: a conflict resolves (system wins), an edit taken
// before the application's first commit is simply overwritten again.
func (e *env) people(ctx context.Context) ([]Outcome, error) {
	pp := &people{e: e, p: e.emu.Person(SpreadsheetID), log: e.logf}
	e.logf("people edit %s:", inputTab)
	acts := pp.acts(ctx)
	for _, a := range acts {
		pp.log("  person: %s", a.what)
		if err := a.do(); err != nil {
			return nil, fmt.Errorf("%s: %w", a.what, err)
		}
	}
	outs, err := e.awaitOutcomes(ctx, acts)
	if err != nil {
		return outs, err
	}
	e.logf("outcomes:")
	for _, o := range outs {
		e.logf("  %s: %s", o.Act, o.Result)
	}
	e.logf("the application now commits altitude again")
	if err := pp.systemWins(ctx); err != nil {
		return outs, err
	}
	if outs[1].Result == ResultConflict {
		id := e.data[1].ID
		err := e.waitFor(ctx, "system-wins", true, func() (bool, string, error) {
			n := 0
			err := e.withReadModel(ctx, func(rm *readModel) (err error) { n, err = rm.conflicts(id, "resolved"); return err })
			return n > 0, fmt.Sprintf("resolved=%d", n), err
		})
		if err != nil {
			return outs, err
		}
		e.logf("conflict resolved: the application's later commit of the field wins")
	}
	o, err := e.resolveInSheet(ctx, pp)
	if err != nil {
		return outs, err
	}
	e.logf("  %s: %s", o.Act, o.Result)
	return append(outs, o), e.waitSettled(ctx)
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.cfg.Out, format+"\n", args...)
}

// erasedAirport is the airport whose manager the demo erases: one no
// person act touches.
const erasedAirport = 5

// erase erases one data subject (an airport's manager) and waits until
// the sheet's writes settled: verify then finds the marker in the
// contact cell, as every reader does.
func (e *env) erase(ctx context.Context, sum *Summary) error {
	a := e.data[erasedAirport]
	if _, err := e.store.Erase(ctx, a.Manager); err != nil {
		return err
	}
	got, err := hikoutei.Get[Airport](ctx, e.store, a.ID)
	if err != nil {
		return err
	}
	if got.Contact != hikoutei.Erased {
		return fmt.Errorf("%w: airport %s's contact after the erasure is not %s", ErrUnexpectedOutcome, a.ID, hikoutei.Erased)
	}
	sum.Erased++
	e.logf("the application erases a data subject (airport %s's manager): its contact reads %s everywhere, the sheet included", a.ID, hikoutei.Erased)
	return e.waitOutbox(ctx, "erase")
}

// verify reads the System tab and compares every row's visible hash with
// the hash of the entity's canonical values.
func (e *env) verify(ctx context.Context, sum *Summary) error {
	_, _, wb := engine.Of(e.store).Workers()
	snaps, err := e.prov.Snapshot(ctx, wb, layout.SystemTabName("Airport"))
	if err != nil {
		return err
	}
	snap := snaps[layout.SystemTabName("Airport")]
	spec, _ := wb.Schema().Tab(snap.Tab)
	all, err := hikoutei.Find[Airport](ctx, e.store)
	if err != nil {
		return err
	}
	sum.SheetRows = len(snap.Rows)
	for _, a := range all {
		rows := snap.Find(a.ID)
		want, err := sheetsio.ExpectedRowHash(spec, a.ID, values(a))
		if err != nil {
			return err
		}
		if len(rows) != 1 || rows[0].Hash != want {
			sum.Mismatches++
		}
	}
	if len(all) != len(snap.Rows) {
		sum.Mismatches += abs(len(snap.Rows) - len(all))
	}
	return nil
}

// quarantinedActs counts the acts whose outcome is quarantined.
func quarantinedActs(outs []Outcome) int {
	n := 0
	for _, o := range outs {
		if o.Result == ResultQuarantined {
			n++
		}
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func values(a *Airport) map[string]any {
	return map[string]any{"id": a.ID, "name": a.Name, "city": a.City, "country": a.Country, "iata": a.IATA, "icao": a.ICAO,
		"latitude": a.Latitude, "longitude": a.Longitude, "altitude": a.Altitude, "timezone": a.Timezone, "dst": a.DST,
		"tz": a.TZ, "type": a.Type, "source": a.Source, "notes": a.Notes, "manager": a.Manager, "contact": a.Contact}
}

// quarantine says what the two quarantine counts count: the acts of the
// outcomes list, and the rows held for review, as `hikoutei status`
// counts them (a pasted duplicate holds both copies).
func (s Summary) quarantine() string {
	return fmt.Sprintf("%d %s above, %d %s held for review (a duplicated row and its copy are 2)",
		s.QuarantinedActs, plural(s.QuarantinedActs, "act"), s.Quarantined, plural(s.Quarantined, "row"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

func (e *env) report(s Summary) {
	tw := tabwriter.NewWriter(e.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nrows committed\t%d\nrows in sheet\t%d\nrequests used\t%d\nconflicts opened/resolved\t%d/%d (%d in the sheet)\n"+
		"quarantined\t%s\nelapsed\t%s\n",
		s.Rows, s.SheetRows, s.Requests, s.Conflicts, s.Resolved, s.ResolvedInSheet, s.quarantine(), s.Elapsed.Round(100_000_000))
	tw.Flush()
	fmt.Fprintf(e.cfg.Out, "\nwhere to look:\n  read model: %s\n  try: sqlite3 %s 'SELECT id, name, altitude, notes FROM \"Airport\" LIMIT 5'\n  store: %s (hikoutei status --dir %s)\n",
		s.ReadModel, s.ReadModel, s.Dir, s.Dir)
	e.removal()
	if e.cfg.KeepOpen {
		fmt.Fprintf(e.cfg.Out, "  spreadsheet web view: %s\n", s.ViewURL)
	}
	fmt.Fprintln(e.cfg.Out, s.Line())
}
