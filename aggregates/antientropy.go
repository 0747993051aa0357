package aggregates

import (
	"fmt"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Anti-entropy (I28): besides the event path, a reconciliation pass reads
// every bound tab and compares each row with what the store says the tab
// shows. The decisions below are pure: the pass supplies what it read and
// what the read model holds, they return the corrections to queue.

// RowDivergence is how one row of a tab differs from canonical state.
type RowDivergence string

// Divergences.
const (
	DivergenceNone      RowDivergence = ""
	DivergenceMissing   RowDivergence = "missing"    // the store says the row shows; the tab lacks it
	DivergenceDrifted   RowDivergence = "drifted"    // the row shows other cells than the store wrote
	DivergenceSurplus   RowDivergence = "surplus"    // a row the store never wrote, or for a removed entity
	DivergenceDuplicate RowDivergence = "duplicated" // the anchor shows on more than one row
	// DivergenceStale: the row shows what the store last wrote, but
	// canonical state moved on with no write queued for it (commits made
	// while sync was off, or by a run syncing elsewhere).
	DivergenceStale RowDivergence = "stale"
)

// RepairRow is one anchor of one tab, as the pass found it and as the
// read model holds it.
type RepairRow struct {
	Target Target
	Entity string
	ID     string
	// Expected is the full-row hash the store says the tab shows (the
	// visible state after its last applied write; "" = not shown).
	Expected string
	// Observed is the full-row hash read ("" = the anchor is absent);
	// Copies is how many rows carry the anchor, CopyHashes their hashes
	// in sheet order.
	Observed   string
	Copies     int
	CopyHashes []string
	// InFlight: the row has an unsettled effect, or the store wrote it
	// after the pass's read began (its base: the read may predate the
	// write); it is in transition and compared again by a later pass.
	InFlight bool
	// Held: an open conflict, active candidate or quarantine holds the
	// row; people resolve it, not anti-entropy.
	Held bool
	// Exists and Values are the entity's canonical state; Canonical is
	// the full-row hash the tab shows when it shows that state ("" = not
	// compared).
	Exists    bool
	Values    map[string]any
	Canonical string
}

// SeenTab is one tab as a reconciliation pass read it.
type SeenTab struct {
	Tab string
	// Rows are the tab's data rows with an anchor: the anchor and the
	// full-row hash of each (a duplicated anchor appears once per row).
	Rows []SeenRow
	// Recreated: the tab was missing and the pass created it again
	// (empty): every row it showed is restored.
	Recreated bool
	// Anchorless counts the non-blank rows without an anchor: no write
	// can address them (a person's stray row), so a System tab reports
	// them as surplus rows for an operator to delete.
	Anchorless int
	// Blocked is why the tab could not be read (a reason code such as
	// sheet_header_drift; "" = read). A blocked tab is reported, never
	// repaired: people fix a header, not anti-entropy.
	Blocked string
	// Body is the digest of the whole values read the tab came from
	// (sheetsio.BodyDigest; zero: not digested). Undecoded: the pass's
	// read digested to Body, the read the store said it last compared
	// (KnownRepair), so nothing was decoded and Rows is empty.
	Body      [32]byte
	Undecoded bool
}

// SeenRow is one data row read: its anchor and full-row hash.
type SeenRow struct{ Anchor, Hash string }

// Index returns the hash read for each anchor and, for each anchor that
// more than one row carries (I16), the hashes of those rows in sheet
// order. An anchor on one row has no copies entry (a pass over a large
// tab keeps one map entry per row, not two): see SeenCopies.
func (s SeenTab) Index() (map[string]string, map[string][]string) {
	observed, copies := make(map[string]string, len(s.Rows)), map[string][]string{}
	for _, r := range s.Rows {
		if first, dup := observed[r.Anchor]; dup {
			if copies[r.Anchor] == nil {
				copies[r.Anchor] = []string{first}
			}
			copies[r.Anchor] = append(copies[r.Anchor], r.Hash)
		}
		observed[r.Anchor] = r.Hash // the last row's, as before
	}
	return observed, copies
}

// SeenCopies is how many rows carry anchor and their hashes, from Index's
// maps.
func SeenCopies(observed map[string]string, copies map[string][]string, anchor string) (int, []string) {
	if c, ok := copies[anchor]; ok {
		return len(c), c
	}
	if h, ok := observed[anchor]; ok {
		return 1, []string{h}
	}
	return 0, nil
}

// Anchors returns the anchors a tab shows or should show, sorted, so a
// pass decides its rows in a stable order (a replayed pass queues the
// same effects).
func Anchors(expected, observed map[string]string) []string {
	out := make([]string, 0, len(expected)+len(observed))
	for k := range expected {
		out = append(out, k)
	}
	for k := range observed {
		if _, dup := expected[k]; !dup {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// RepairReport counts one tab's divergent rows and the corrections
// queued for them.
type RepairReport struct {
	Missing, Drifted, Surplus, Duplicated, Stale int
	Queued                                       int
}

// Diverged is the number of rows that differ from canonical state.
func (r RepairReport) Diverged() int {
	return r.Missing + r.Drifted + r.Surplus + r.Duplicated + r.Stale
}

// Count adds one row's divergence.
func (r *RepairReport) Count(d RowDivergence) {
	switch d {
	case DivergenceMissing:
		r.Missing++
	case DivergenceDrifted:
		r.Drifted++
	case DivergenceSurplus:
		r.Surplus++
	case DivergenceDuplicate:
		r.Duplicated++
	case DivergenceStale:
		r.Stale++
	}
}

// TabPolicy says what anti-entropy may repair on one tab.
type TabPolicy struct {
	// Input: people edit the tab. Its drifted rows are edits (the poller
	// decides them) and rows of removed entities are cleanup's (I21);
	// missing rows are restored only when Restore allows it, and a live
	// entity's row no write of this binding reached is projected again.
	Input bool
	// Restore: missing Input rows may be re-appended: the tab was emptied
	// or recreated (a mass deletion), or the deletion evidence of the row
	// is already recorded (C06: a deleted row is evidence first).
	Restore bool
	// Columns are the tab's columns, for the corrections' values.
	Columns []string
}

// classify says how r differs from canonical state (DivergenceNone when it
// shows what the store wrote, or cannot be compared now).
func classify(r RepairRow) RowDivergence {
	switch {
	case r.InFlight || r.Held:
		return DivergenceNone
	case r.Copies > 1:
		return DivergenceDuplicate
	case r.Observed == "" && r.Expected != "" && r.Exists:
		return DivergenceMissing
	case r.Observed == "":
		return DivergenceNone
	case r.Expected == "" || !r.Exists:
		return DivergenceSurplus
	case r.Observed != r.Expected:
		return DivergenceDrifted
	case r.Canonical != "" && r.Observed != r.Canonical:
		return DivergenceStale
	}
	return DivergenceNone
}

// DecideRepair returns the correction that brings r back to canonical
// state under p, and false when anti-entropy leaves the row alone (in
// transition, held, duplicated — I16 —, or people's to decide). A write
// over an existing row is guarded by the full-row hash read (CAS).
func DecideRepair(r RepairRow, p TabPolicy) (Queue, RowDivergence, bool) {
	d := classify(r)
	switch {
	case d == DivergenceNone:
		return Queue{}, d, false
	case d == DivergenceDuplicate && !p.Input:
		q, ok := duplicateRepair(r)
		return q, d, ok
	case d == DivergenceDuplicate:
		return Queue{}, d, false // I16: people's to resolve (quarantine)
	}
	if p.Input && !inputRepairable(r, d, p) {
		return Queue{}, d, false
	}
	q, ok := Correction(Effect{Target: r.Target, Entity: r.Entity, EntityID: r.ID, ObservedHash: r.Observed},
		r.Values, r.Exists, p.Columns)
	return q, d, ok
}

// duplicateRepair deletes, by full-row CAS, one copy of an anchor a
// System tab shows more than once (a person typed an existing anchor into
// another row): a copy that differs from what the store wrote, or the
// bottom one of identical copies. One copy per pass; the next pass sees
// what is left (and re-appends or rewrites the row if needed).
func duplicateRepair(r RepairRow) (Queue, bool) {
	victim := ""
	for _, h := range r.CopyHashes {
		if h != r.Expected {
			victim = h
			break
		}
	}
	if victim == "" && len(r.CopyHashes) > 0 {
		victim = r.CopyHashes[0] // identical copies of the expected row
	}
	if victim == "" {
		return Queue{}, false
	}
	return Queue{Target: r.Target, Op: events.OpDelete, Entity: r.Entity, ID: r.ID, ExpectedHash: victim}, true
}

// inputRepairable: on an Input tab anti-entropy restores a missing row
// when p allows it, and projects canonical state over a row of a live
// entity that no write of this binding ever reached (a spreadsheet the
// store switched to shows it from an earlier time: it is no person's edit
// the store saw), or over a row that still shows the store's last write
// after canonical state moved on (stale). Drifted rows are edits and
// surplus rows of removed entities are cleanup's.
func inputRepairable(r RepairRow, d RowDivergence, p TabPolicy) bool {
	switch d {
	case DivergenceMissing:
		return p.Restore
	case DivergenceSurplus:
		return r.Exists && r.Expected == ""
	case DivergenceStale:
		return true // no person's edit: the row shows the store's last write
	}
	return false
}

// TargetBinding decides which sync target a store's outbox serves when
// sync starts for target (a digest of the spreadsheet id): nothing when it
// already serves it; otherwise a sync.target_bound event. A store that
// never recorded a binding adopts its legacy targets' effects (they were
// queued for the spreadsheet it synced to before targets were keyed by
// spreadsheet: one event per legacy name). A switch from another bound
// target abandons that target's unsettled effects (the caller supersedes
// them with DecideAbandon in the same unit), and the new target is
// backfilled completely.
func TargetBinding(bound, target string, legacy []string, now time.Time) (Decision, bool) {
	if bound == target {
		return Decision{}, false
	}
	stream := events.SyncStream(target)
	d := Decision{Stream: stream, ExpectedVersion: events.AnyVersion}
	if bound == "" {
		for _, l := range legacy {
			if l != target {
				d.Events = append(d.Events, events.New(stream, events.SyncTargetBound{Target: target, Adopted: l}, now))
			}
		}
	}
	if len(d.Events) == 0 {
		d.Events = []events.Event{events.New(stream, events.SyncTargetBound{Target: target, Previous: bound}, now)}
	}
	return d, true
}

// TabRouting decides which sync target shows tab from now on, when it
// is not the one last recorded (last, "" = none): a sync.tab_routed
// event. moved reports a move from a target that showed the tab (the
// caller supersedes that target's unsettled effects on the tab with
// DecideAbandon in the same unit; the new target is backfilled).
// shownBefore is last, or when none was recorded, the target that showed
// the tab before routes existed ("" = none).
func TabRouting(tab, shownBefore, target string, now time.Time) (d Decision, moved bool) {
	if shownBefore == target {
		return Decision{}, false
	}
	stream := events.SyncStream(target)
	ev := events.SyncTabRouted{Target: target, Previous: shownBefore, Tab: tab}
	return Decision{Stream: stream, ExpectedVersion: events.AnyVersion, Events: []events.Event{events.New(stream, ev, now)}},
		shownBefore != ""
}

// DecideAbandon supersedes an unsettled effect of a target the store no
// longer syncs to (the spreadsheet was switched): nothing is written to
// the old spreadsheet any more. Errors: ErrNotSupersedable for a settled
// effect.
func DecideAbandon(e Effect, now time.Time) (Decision, error) {
	if e.State.Settled() {
		return Decision{}, fmt.Errorf("%w: %s is %s", ErrNotSupersedable, e.ID, e.State)
	}
	return transition(e, events.EffectSuperseded{EffectID: e.ID}, now), nil
}
