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
	in, err := e.people(ctx)
	if err != nil {
		return sum, err
	}
	sum.Conflicts, sum.Resolved, sum.Quarantined = in.opened, in.resolved, in.quarantined
	if err := e.verify(ctx, &sum); err != nil {
		return sum, err
	}
	c := e.emu.Counters(SpreadsheetID)
	sum.Requests = c.Reads + c.Writes
	return sum, nil
}

// people runs the people's edits, waits for the pollers to record each
// outcome, then lets a later application commit win the conflict.
func (e *env) people(ctx context.Context) (inbound, error) {
	pp := &people{e: e, p: e.emu.Person(SpreadsheetID), log: e.logf}
	e.logf("people edit %s:", inputTab)
	if err := pp.act(ctx); err != nil {
		return inbound{}, err
	}
	in, err := e.pollUntil(ctx, "the pollers", func(in inbound) bool { return in.accepted && in.opened >= 1 && in.quarantined >= 3 })
	if err != nil {
		return in, err
	}
	e.logf("pollers: edit accepted, %d conflict opened, %d rows quarantined; the application now commits altitude again", in.opened, in.quarantined)
	if err := pp.systemWins(ctx); err != nil {
		return in, err
	}
	if in, err = e.pollUntil(ctx, "system-wins", func(in inbound) bool { return in.resolved >= 1 }); err != nil {
		return in, err
	}
	e.logf("conflict resolved: the application's later commit of the field wins")
	return in, e.waitSynced(ctx)
}

func (e *env) logf(format string, args ...any) {
	fmt.Fprintf(e.cfg.Out, format+"\n", args...)
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func values(a *Airport) map[string]any {
	return map[string]any{"id": a.ID, "name": a.Name, "city": a.City, "country": a.Country, "iata": a.IATA, "icao": a.ICAO,
		"latitude": a.Latitude, "longitude": a.Longitude, "altitude": a.Altitude, "timezone": a.Timezone, "dst": a.DST,
		"tz": a.TZ, "type": a.Type, "source": a.Source, "notes": a.Notes}
}

func (e *env) report(s Summary) {
	tw := tabwriter.NewWriter(e.cfg.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "\nrows committed\t%d\nrows in sheet\t%d\nrequests used\t%d\nconflicts opened/resolved\t%d/%d\nquarantined\t%d\nelapsed\t%s\n",
		s.Rows, s.SheetRows, s.Requests, s.Conflicts, s.Resolved, s.Quarantined, s.Elapsed.Round(100_000_000))
	tw.Flush()
	fmt.Fprintf(e.cfg.Out, "\nwhere to look:\n  read model: %s\n  try: sqlite3 %s 'SELECT id, name, altitude, notes FROM \"Airport\" LIMIT 5'\n  store: %s (hikoutei status --dir %s)\n",
		s.ReadModel, s.ReadModel, s.Dir, s.Dir)
	if e.cfg.KeepOpen {
		fmt.Fprintf(e.cfg.Out, "  spreadsheet web view: %s\n", s.ViewURL)
	}
	fmt.Fprintln(e.cfg.Out, s.Line())
}
