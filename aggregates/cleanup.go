package aggregates

import "github.com/hikoutei/hikoutei-go/events"

// CleanupRow is one row of an Input tab as the cleanup's grid read shows it.
type CleanupRow struct {
	Anchor string // "" when the row has no anchor
	Hash   string // full-row visible hash
	Plain  bool   // no formula, error value or merge
}

// DecideCleanup decides the surplus-row cleanup of one Input tab (I21):
// full-row CAS deletes, each guarded by the row hash read now, of
//   - duplicates of a bound key: when every row showing a live entity's
//     anchor is an identical copy of what the system last wrote, one copy
//     per pass (a row's deletes are ordered, I07);
//   - unambiguous orphans: a single row whose anchor names no live entity
//     and which shows exactly what the system last wrote.
//
// Rows held by active candidates or open conflicts, rows with an effect in
// flight, duplicates that differ, rows changed since base and rows carrying
// a person's data stay for review. Rows without an anchor are evidence
// only: rows are addressed by anchor, so they cannot be deleted by CAS.
// states holds the RowState of every anchor rows shows that needs one
// (CleanupNeedsState); an anchor without one is the single row of a live
// entity, never surplus.
func DecideCleanup(tab, entity string, rows []CleanupRow, states map[string]RowState, base uint64, sheet Sheet) []Queue {
	copies := map[string]int{}
	for _, r := range rows {
		copies[r.Anchor]++
	}
	var out []Queue
	dupDone := map[string]bool{}
	del := func(r CleanupRow) {
		out = append(out, Queue{Target: sheet.Target(tab, r.Anchor), Op: events.OpDelete, Entity: entity, ID: r.Anchor, ExpectedHash: r.Hash})
	}
	for _, r := range rows {
		rs, known := states[r.Anchor]
		switch {
		case r.Anchor == "":
		case copies[r.Anchor] > 1:
			if !dupDone[r.Anchor] && surplusCopy(r.Anchor, rows, rs, base) {
				del(r)
			}
			dupDone[r.Anchor] = true
		case !known: // a single row of a live entity (CleanupNeedsState)
		case unambiguousOrphan(r, rs, base):
			del(r)
		}
	}
	return out
}

// CleanupNeedsState reports whether DecideCleanup needs the RowState of
// an anchor that copies rows show, its entity existing or not: only a
// duplicate or the row of an entity that does not exist can be surplus,
// so a cleanup of a large tab reads the state of those rows only.
func CleanupNeedsState(copies int, exists bool) bool { return copies > 1 || !exists }

// surplusCopy reports whether the rows showing anchor are identical copies
// of exactly what the system last wrote for a live entity, with nothing in
// flight and no candidate: one of them can go.
func surplusCopy(anchor string, rows []CleanupRow, rs RowState, base uint64) bool {
	if !rs.Exists || rs.VisibleHash == "" || rs.VisibleSeq > base {
		return false
	}
	for _, o := range rows {
		if o.Anchor == anchor && (o.Hash != rs.VisibleHash || !o.Plain) {
			return false // the copies differ: ambiguous, left for review
		}
	}
	return rs.untouched()
}

func unambiguousOrphan(r CleanupRow, rs RowState, base uint64) bool {
	return !rs.Exists && rs.VisibleHash != "" && rs.VisibleSeq <= base && rs.VisibleHash == r.Hash && r.Plain && rs.untouched()
}
