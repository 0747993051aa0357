package effects

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// AntiEntropy is one anti-entropy pass (I28): it reads the tabs that
// show entity rows (one values.batchGetByDataFilter for all of them, two
// requests when a tab's sheetId went stale), creates again any tab a
// person deleted or emptied, and hands each readable tab to the outbox,
// which queues the fenced corrections that bring it back to canonical
// state. A pass reads whole tabs up to Config.ReconcileRows rows in all
// (by their size at their last read, at least one tab), taking the tabs
// in turn: a workbook larger than that is compared over several passes.
// It returns each tab's report; a tab whose header drifted is left
// blocked (the outbox records why, for health) with an empty report.
// The read model's checkpoint taken before the read is the read's base:
// a row the store writes after it is compared by a later pass.
func (d *Dispatcher) AntiEntropy(ctx context.Context) (map[string]aggregates.RepairReport, error) {
	return d.antiEntropy(ctx, false)
}

// antiEntropy is AntiEntropy; a scheduled pass first leaves out the tabs
// being filled (entropyCursor.atRest).
func (d *Dispatcher) antiEntropy(ctx context.Context, scheduled bool) (map[string]aggregates.RepairReport, error) {
	if err := d.cfg.Outbox.Renew(); err != nil {
		return nil, fenced(err)
	}
	all := unmigrating(d.cfg.Layouts, rowTabs(d.cfg.Workbook.Schema()))
	var tabs []string
	if scheduled {
		var deferred int
		tabs, deferred = d.ae.choose(all, d.cfg.ReconcileRows, d.busyWrites(), d.cfg.ReconcileInterval, d.cfg.Clock.Now())
		d.C.Deferred.Add(int64(deferred))
	} else {
		tabs = d.ae.pick(all, d.cfg.ReconcileRows)
	}
	if len(tabs) == 0 {
		return nil, nil
	}
	if out, ok, err := d.antiEntropyKnown(ctx, tabs); ok || err != nil {
		return out, err
	}
	base, err := d.cfg.Outbox.RepairBase()
	if err != nil {
		return nil, fenced(err)
	}
	checks, kept := seenChecks(tabs, d.ae.sizes(tabs))
	snaps, err := d.cfg.Provider.SnapshotChecked(ctx, d.cfg.Workbook, checks, tabs...)
	if err != nil {
		return nil, err
	}
	recreated, err := d.recreate(ctx, snaps)
	if err != nil {
		return nil, err
	}
	// The cells read are garbage from here: a pass holds only anchors and
	// hashes while the outbox compares them.
	seens := seenTabs(tabs, snaps, recreated, kept)
	out := map[string]aggregates.RepairReport{}
	for _, seen := range seens {
		tab := seen.Tab
		d.ae.sized(tab, len(seen.Rows))
		rep, err := d.cfg.Outbox.Repair(d.cfg.Spreadsheet, base, seen)
		if err != nil {
			return out, fenced(err)
		}
		d.ae.compared(tab, d.cfg.Clock.Now()) // a blocked tab too: its writes wait, none is counted
		out[tab] = rep
	}
	return out, nil
}

// busyWrites is how many rows written to a tab between two scheduled
// passes make it one being filled: a batch's worth (never fewer than
// minBusy) per default reconciliation period, so a longer period needs
// as many more (a shorter one needs the same).
func (d *Dispatcher) busyWrites() int {
	periods := max(1, int(d.cfg.ReconcileInterval/DefaultReconcileInterval))
	return max(d.cfg.MaxBatch, minBusy) * periods
}

// recreate creates again, empty and with their header, the tabs a person
// deleted or cleared completely (their rows are then restored).
func (d *Dispatcher) recreate(ctx context.Context, snaps map[string]*sheetsio.TabSnapshot) ([]string, error) {
	var gone []string
	for tab, s := range snaps {
		if s.Empty || errors.Is(s.Err, sheetsio.ErrTabMissing) {
			gone = append(gone, tab)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	if err := d.cfg.Outbox.Renew(); err != nil {
		return nil, fenced(err)
	}
	created, err := d.cfg.Provider.Reprovision(ctx, d.cfg.Workbook)
	if err != nil && !errors.Is(err, sheetsio.ErrHeaderDrift) {
		return nil, err
	}
	d.cfg.Logger.Warn("tabs were deleted or cleared in the spreadsheet; created them again", "tabs", len(gone))
	for _, tab := range gone {
		snaps[tab] = &sheetsio.TabSnapshot{Tab: tab}
	}
	return append(created, gone...), nil
}

// seenTabs are the tabs of a pass that were read, in the pass's order,
// as the outbox compares them; each snapshot is dropped from snaps once
// converted. A tab its seenRows kept as the read streamed (Digested) is
// taken from there: its cells were never decoded.
func seenTabs(tabs []string, snaps map[string]*sheetsio.TabSnapshot, recreated []string, kept map[string]*seenRows) []aggregates.SeenTab {
	var out []aggregates.SeenTab
	for _, tab := range tabs {
		if seen, ok := seenTab(snaps[tab], slices.Contains(recreated, tab), kept[tab]); ok {
			out = append(out, seen)
		}
		delete(snaps, tab)
	}
	return out
}

// seenTab is what a pass hands the outbox for one tab: a tab that could
// not be read (header drift) carries its reason code; ok is false for a
// tab the pass did not read.
func seenTab(s *sheetsio.TabSnapshot, recreated bool, kept *seenRows) (aggregates.SeenTab, bool) {
	if s == nil {
		return aggregates.SeenTab{}, false
	}
	if s.Err != nil {
		return aggregates.SeenTab{Tab: s.Tab, Blocked: sheetsio.CodeOf(s.Err)}, true
	}
	if s.Digested && kept != nil {
		return aggregates.SeenTab{Tab: s.Tab, Recreated: recreated, Rows: kept.rows, Anchorless: kept.anchorless, Body: s.Body}, true
	}
	seen := aggregates.SeenTab{Tab: s.Tab, Recreated: recreated, Rows: make([]aggregates.SeenRow, 0, len(s.Rows)), Body: s.Body}
	for _, r := range s.Rows {
		switch {
		case r.Anchor != "":
			seen.Rows = append(seen.Rows, aggregates.SeenRow{Anchor: r.Anchor, Hash: r.Hash})
		case !blankRow(r.Cells):
			seen.Anchorless++
		}
	}
	return seen, true
}

// seenChecks are the RowChecks of a pass's read: one seenRows a tab,
// with room for the rows the tab had at its last read (sizes).
func seenChecks(tabs []string, sizes map[string]int) (map[string]sheetsio.RowCheck, map[string]*seenRows) {
	checks, kept := make(map[string]sheetsio.RowCheck, len(tabs)), make(map[string]*seenRows, len(tabs))
	for _, t := range tabs {
		k := &seenRows{rows: make([]aggregates.SeenRow, 0, sizes[t])}
		checks[t], kept[t] = k, k
	}
	return checks, kept
}

// seenRows is a sheetsio.RowCheck that keeps, as a values read streams,
// what anti-entropy compares of each row — its anchor and full-row hash
// (the row digest's, equal to the decoded row's), and the count of
// non-blank rows without an anchor — and certifies every row, so the
// tab's cells are never decoded (a row the digest declines leaves the
// read to decode the tab in full, and seenTab to read that).
type seenRows struct {
	rows       []aggregates.SeenRow
	anchorless int
}

var _ sheetsio.RowCheck = (*seenRows)(nil)

// Begin implements sheetsio.RowCheck.
func (k *seenRows) Begin() { k.rows, k.anchorless = k.rows[:0], 0 }

// Row implements sheetsio.RowCheck.
func (k *seenRows) Row(_ int, d cell.RowDigest) bool {
	switch {
	case d.Blank:
	case len(d.Anchor) > 0:
		k.rows = append(k.rows, aggregates.SeenRow{Anchor: string(d.Anchor), Hash: string(d.Hash[:])})
	default:
		k.anchorless++
	}
	return true
}

// Done implements sheetsio.RowCheck.
func (k *seenRows) Done() bool { return true }

// rowTabs lists the tabs that show entity rows (System and Input).
func rowTabs(s *layout.Schema) []string {
	var out []string
	for _, t := range s.Tabs() {
		if t.Role == layout.RoleSystem || t.Role == layout.RoleInput {
			out = append(out, t.Name)
		}
	}
	return out
}

// maxDeferral is the longest a tab goes uncompared because scheduled
// anti-entropy passes left it out while it was being filled (a turn of
// the tabs within the row budget may add to it).
const maxDeferral = 5 * time.Minute

// minBusy is the fewest rows written to a tab between two scheduled
// passes (at the default period) that make it one being filled,
// whatever the batch size: a store's ordinary traffic never defers a
// comparison.
const minBusy = 1000

// entropyCursor is which row tabs the next anti-entropy pass reads, and
// what the dispatcher wrote to each since the last scheduled pass.
type entropyCursor struct {
	mu      sync.Mutex
	next    int                  // index of the first tab of the next pass
	rows    map[string]int       // each tab's data rows at its last read
	written map[string]int       // rows written to each tab since the last scheduled pass
	last    map[string]time.Time // when a pass last compared each tab (or first left it out, before one did)
}

// wrote counts a row written to tab (an effect applied).
func (c *entropyCursor) wrote(tab string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written == nil {
		c.written = map[string]int{}
	}
	c.written[tab]++
}

// choose returns the tabs a scheduled pass at now compares, of those
// its turn picks within budget rows (pick), and how many of those it
// leaves out (atRest).
func (c *entropyCursor) choose(all []string, budget, busy int, period time.Duration, now time.Time) ([]string, int) {
	return c.atRest(c.pick(all, budget), busy, period, now)
}

// atRest returns the tabs of picked a scheduled pass at now compares,
// and how many it leaves out: a tab busy rows were written to since the
// last scheduled pass is being filled (a backfill, a bulk load), its
// rows read now a moving target that costs a whole read and a
// comparison of a partly written tab; it waits for a pass after the
// writes ease, unless the next pass (a period later) would come more
// than maxDeferral after the tab was last compared (or first left out).
// A period of maxDeferral or more leaves nothing out. The counts start
// again.
func (c *entropyCursor) atRest(picked []string, busy int, period time.Duration, now time.Time) (out []string, deferred int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	defer clear(c.written)
	if period >= maxDeferral {
		return picked, 0
	}
	if c.last == nil {
		c.last = map[string]time.Time{}
	}
	for _, tab := range picked {
		if c.written[tab] < busy {
			out = append(out, tab)
			continue
		}
		last, known := c.last[tab]
		if !known {
			last, c.last[tab] = now, now
		}
		if now.Add(period).Sub(last) > maxDeferral {
			out = append(out, tab)
			continue
		}
		deferred++
	}
	return out, deferred
}

// compared records that a pass compared tab at now.
func (c *entropyCursor) compared(tab string, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]time.Time{}
	}
	c.last[tab] = now
}

// sizes are the tabs' data rows at their last read.
func (c *entropyCursor) sizes(tabs []string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(tabs))
	for _, t := range tabs {
		out[t] = c.rows[t]
	}
	return out
}

// pick returns the tabs of one pass: from the cursor on, while their last
// known sizes fit budget rows (at least one tab), and moves the cursor.
func (c *entropyCursor) pick(all []string, budget int) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	used := 0
	for i := range all {
		tab := all[(c.next+i)%len(all)]
		if len(out) > 0 && used+c.rows[tab] > budget {
			break
		}
		out, used = append(out, tab), used+c.rows[tab]
	}
	c.next = (c.next + len(out)) % max(len(all), 1)
	return out
}

// sized records a tab's data rows as just read.
func (c *entropyCursor) sized(tab string, rows int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rows == nil {
		c.rows = map[string]int{}
	}
	c.rows[tab] = rows
}

// KnownRepairs is what an Outbox may also answer: the digest of the
// whole values read of tabs (TabSnapshot.Body) that its last comparison
// of each of them read and queued nothing for, still valid at the read
// model's checkpoint now (zero when none). A pass whose read digests to
// it decodes nothing (SnapshotUnchanged): each tab goes to Repair as
// SeenTab.Undecoded, and the store compares the next rows of its
// canonical window with what it kept of that read, or answers
// ErrReadUndecoded when its read model moved meanwhile.
type KnownRepairs interface {
	KnownRepair(spreadsheet string, tabs []string) (sheetsio.BodyDigest, error)
}

// antiEntropyKnown is an anti-entropy pass over tabs whose read the store
// knows (KnownRepairs) and that still reads the same bytes: a read
// digested only, then each tab's Repair undecoded. ok is false when the
// store knows no read of tabs, the read differs (a person's edit, a
// deleted tab: the pass reads again and decodes) or the store moved on
// before a tab was compared.
func (d *Dispatcher) antiEntropyKnown(ctx context.Context, tabs []string) (map[string]aggregates.RepairReport, bool, error) {
	kr, ok := d.cfg.Outbox.(KnownRepairs)
	if !ok {
		return nil, false, nil
	}
	body, err := kr.KnownRepair(d.cfg.Spreadsheet, tabs)
	if err != nil || body.IsZero() {
		return nil, false, fenced(err)
	}
	base, err := d.cfg.Outbox.RepairBase()
	if err != nil {
		return nil, false, fenced(err)
	}
	same, err := d.cfg.Provider.SnapshotUnchanged(ctx, d.cfg.Workbook, body, tabs...)
	if err != nil || !same {
		return nil, false, err
	}
	out := make(map[string]aggregates.RepairReport, len(tabs))
	for _, tab := range tabs {
		rep, err := d.cfg.Outbox.Repair(d.cfg.Spreadsheet, base, aggregates.SeenTab{Tab: tab, Body: body, Undecoded: true})
		if errors.Is(err, ErrReadUndecoded) {
			return nil, false, nil
		}
		if err != nil {
			return out, true, fenced(err)
		}
		d.ae.compared(tab, d.cfg.Clock.Now())
		out[tab] = rep
	}
	return out, true, nil
}
