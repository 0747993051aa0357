package aggregates

import (
	"fmt"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// observation decides one TabRead (DecideTab).
type observation struct {
	r      TabRead
	st     TabState
	sheet  Sheet
	now    time.Time
	c      Changes
	stats  ObserveStats
	active map[string]bool     // evidence ids active before or added by this observation
	found  map[string]bool     // evidence ids this read still shows
	byRow  map[string][]string // active evidence ids by row hash (rows a partial read left out)
	hold   bool                // a row shifted under a partial read: clear no evidence
	copies map[string]int      // rows shown of each anchor
	done   bool                // decided: nothing left for rows and finish
}

func newObservation(r TabRead, st TabState, sheet Sheet, now time.Time) *observation {
	ob := &observation{r: r, st: st, sheet: sheet, now: now, active: map[string]bool{}, found: map[string]bool{}}
	for id := range st.Active {
		ob.active[id] = true
	}
	return ob
}

func (ob *observation) decide() error {
	copies := make(map[string]int, len(ob.r.Rows))
	for _, sr := range ob.r.Rows {
		if sr.Anchor != "" {
			copies[sr.Anchor]++
		}
	}
	ob.begin(copies, len(ob.r.Rows))
	if err := ob.rows(ob.r.Rows, ob.st.Rows); err != nil {
		return err
	}
	ob.finish()
	return nil
}

// begin starts a decision of a tab showing shown non-blank rows, copies
// counting the rows of each anchor: a blocked tab is decided at once (its
// rows were not read), and so is a tab that reads empty while rows are
// expected, its header included (TabRead.Empty); rows then decides
// nothing.
func (ob *observation) begin(copies map[string]int, shown int) {
	ob.copies, ob.done = copies, true
	expected := len(ob.st.Expect.Rows) > 0
	switch {
	case ob.r.Blocked != "" && !(ob.r.Empty && expected):
		// Header drift or a missing tab: rows were not read, their evidence stays.
		ob.evidence(events.TypeObservationRejected, "", 0, "", ReasonTabBlocked, "", ob.r.Blocked)
	case shown == 0 && expected: // suddenly empty (C04)
		ob.empty()
	default:
		ob.done = false
	}
}

// rows decides some of the tab's shown rows, against the states of their
// anchors.
func (ob *observation) rows(rows []ShownRow, states map[string]RowState) error {
	if ob.done {
		return nil
	}
	ob.st.Rows = states
	for i := range rows {
		if err := ob.shown(&rows[i], ob.copies[rows[i].Anchor]); err != nil {
			return err
		}
	}
	return nil
}

// finish decides what concerns the whole tab once every row was: the
// expected anchors no row shows, and the evidence the tab no longer shows.
func (ob *observation) finish() {
	if ob.done {
		return
	}
	ob.done = true
	for _, a := range sortedKeys(ob.st.Expect.Rows) { // a deleted row is evidence of the deletion of that key (C06)
		if ob.copies[a] == 0 {
			ob.missing(a)
		}
	}
	ob.clearGone()
}

// empty decides a tab that reads empty while rows are expected: one
// suspected mass deletion when rows settled before the read are missing
// (its detail says when the header row is gone too); nothing at all
// (evidence neither recorded nor cleared) when every expected row was
// written after the read's base or is in flight: the read may have raced
// the first dispatch.
func (ob *observation) empty() {
	n := ob.st.Expect.settledRows(ob.r.Base)
	if n == 0 {
		ob.stats.Deferred += len(ob.st.Expect.Rows)
		return
	}
	detail := fmt.Sprintf("%d expected rows", n)
	if ob.r.Empty {
		detail += "; the header row is gone too"
	}
	ob.evidence(events.TypeObservationRejected, "", 0, "", ReasonMassDeletion, "", detail)
	ob.clearGone()
}

// missing decides an expected anchor no row shows: deletion evidence if
// the row was settled when the read began; otherwise deferred (a row
// applied after the read's base, or with an effect in flight, may not
// show in this read yet), keeping any deletion evidence it already has.
func (ob *observation) missing(anchor string) {
	if ob.st.Expect.Settled(anchor, ob.r.Base) {
		ob.evidence(events.TypeObservationRejected, anchor, 0, "", ReasonRowDeleted, "", "")
		return
	}
	ob.stats.Deferred++
	ob.found[quarantineID(ob.r.Tab, anchor, "", ReasonRowDeleted)] = true
}

// shown decides one non-blank row: a shifted row is deferred (and the
// tab's evidence held); a row certified by the values read keeps its
// evidence; a row read with grid data is decided, unless (outside a full
// scan) it shows exactly the system's last write.
func (ob *observation) shown(sr *ShownRow, copies int) error {
	ob.stats.Rows++
	switch {
	case sr.Shifted:
		ob.stats.Deferred++
		ob.hold = true
		return nil
	case sr.Grid == nil:
		ob.keep(sr.Hash)
		return nil
	}
	g := sr.Grid
	if !ob.r.Full && g.Anchor != "" && copies == 1 && g.Plain && ob.st.Expect.Rows[g.Anchor] == g.Hash && !ob.st.Expect.Lost[g.Anchor] {
		ob.keepSingle(g.Anchor, g.Hash) // shows exactly the system's last write: only a full scan re-derives it
		return nil
	}
	return ob.row(g, copies)
}

// keep marks as still shown the active evidence of a row the values read
// certified and the partial grid read left out: every entry recorded for
// the same full-row hash (it covers every cell, the anchor's too).
func (ob *observation) keep(hash string) {
	if ob.byRow == nil {
		ob.byRow = make(map[string][]string, len(ob.st.Active))
		for id, q := range ob.st.Active {
			ob.byRow[q.RowHash] = append(ob.byRow[q.RowHash], id)
		}
	}
	for _, id := range ob.byRow[hash] {
		ob.found[id] = true
	}
}

// keepSingle marks as still shown the active evidence of a single row
// that a pass skipped because it shows exactly the system's last write
// (e.g. an orphan row): its own evidence (same anchor and row hash), but
// not a duplicate's, which only holds while another copy shows too.
func (ob *observation) keepSingle(anchor, hash string) {
	for id, q := range ob.st.Active {
		if q.Anchor == anchor && q.RowHash == hash && q.Reason != ReasonDuplicateAnchor {
			ob.found[id] = true
		}
	}
}

// clearGone clears active evidence of the tab that this read no longer
// shows; nothing while a row shifted under a partial read.
func (ob *observation) clearGone() {
	if ob.hold {
		return
	}
	for _, id := range sortedKeys(ob.st.Active) {
		if !ob.found[id] {
			ob.add(events.RowQuarantineCleared{Tab: ob.r.Tab, QuarantineID: id, Anchor: ob.st.Active[id].Anchor})
		}
	}
}

func (ob *observation) add(p events.Payload) {
	stream := events.InboundStream(ob.r.Tab)
	ob.c.Add(stream, ob.st.InboundVersion, events.New(stream, p, ob.now))
}

// evidence records a quarantine or rejection unless the same evidence is
// already active (idempotent polls).
func (ob *observation) evidence(typ events.Type, anchor string, sheetRow int, rowHash, reason, column, detail string) {
	id := quarantineID(ob.r.Tab, anchor, rowHash, reason)
	ob.found[id] = true
	if ob.active[id] {
		return
	}
	ob.active[id] = true
	ob.stats.Quarantined++
	e := events.Evidence{Tab: ob.r.Tab, Anchor: anchor, SheetRow: int64(sheetRow), RowHash: rowHash, Reason: reason,
		Column: column, Detail: detail, QuarantineID: id}
	if anchor != "" {
		e.Entity, e.ID = ob.r.Entity, anchor
	}
	if typ == events.TypeRowQuarantined {
		ob.add(events.RowQuarantined(e))
		return
	}
	ob.add(events.ObservationRejected(e))
}

// row decides a row read with grid data.
func (ob *observation) row(g *GridRow, copies int) error {
	quarantine := func(anchor, reason, column string) {
		ob.evidence(events.TypeRowQuarantined, anchor, g.SheetRow, g.Hash, reason, column, "")
	}
	reject := func(anchor, reason string) {
		ob.evidence(events.TypeObservationRejected, anchor, g.SheetRow, g.Hash, reason, "", "")
	}
	rs := ob.st.Rows[g.Anchor]
	switch {
	case g.AnchorReason != "":
		quarantine("", g.AnchorReason, ob.sheet.AnchorColumn())
	case g.Anchor == "":
		reject("", ReasonRowWithoutAnchor)
	case copies > 1:
		quarantine(g.Anchor, ReasonDuplicateAnchor, ob.sheet.AnchorColumn()) // I16
	case !rs.Bound && !rs.Exists:
		reject(g.Anchor, ReasonUnknownAnchor)
	case !rs.Exists:
		reject(g.Anchor, ReasonOrphanRow)
	case g.Malformed != nil:
		quarantine(g.Anchor, g.Malformed.Reason, g.Malformed.Column)
	case g.Values[ob.r.Key] != g.Anchor:
		quarantine(g.Anchor, ReasonKeyEdited, ob.r.Key)
	default:
		return ob.fields(g, rs)
	}
	return nil
}

// fields classifies the user-owned cells of a bound row of a live entity.
func (ob *observation) fields(g *GridRow, rs RowState) error {
	if rs.InFlight || rs.VisibleSeq > ob.r.Base || !rs.Bound {
		// In transition, or never written under this binding (a
		// spreadsheet switched to shows it from an earlier time): no
		// cell is an edit of what the store showed; decided once written.
		ob.stats.Deferred++
		return nil
	}
	edits, stale, shown := map[string]any{}, map[string]any{}, map[string]string{}
	agreed, held := map[string]string{}, rs.OpenConflicts > 0 // the cells showing canonical state, by shown hash
	for _, f := range ob.r.User {
		if ob.sheet.ShowsMarkerOf(ob.r.Tab, f, g.Values[f], rs.Canonical[f]) {
			continue // the marker of a value the sheet cannot hold: shows canonical, never an edit
		}
		a, err := ShownHash(g.Values[f])
		if err != nil {
			return err
		}
		b, err := ShownHash(rs.Canonical[f])
		if err != nil {
			return err
		}
		sf := rs.Sheet[f]
		held = held || sf.ConflictID != ""
		if a == b {
			agreed[f] = a
		}
		switch classifyField(a, sf.ShownHash, b, sf.ShownKnown) {
		case verdictEdit:
			edits[f], shown[f] = g.Values[f], a
		case verdictStale:
			if sf.ConflictID == "" {
				stale[f] = rs.Canonical[f]
			}
		case verdictConflict:
			held = true
			if sf.CandidateHash != a { // already recorded: polls never re-open or resolve (I11)
				ob.candidate(g, rs, f, a)
			}
		}
	}
	if len(edits) > 0 {
		if err := ob.accept(g, rs, edits, shown); err != nil {
			return err
		}
	}
	if len(stale) == 0 && len(edits) == 0 && !held && len(agreed) > 0 && ob.st.Expect.Lost[g.Anchor] {
		// The row lost a system write, yet shows canonical state now (the
		// person typed the value the write carried): the row as read is
		// what the store expects from now on (the lost mark clears;
		// nothing is written).
		ob.add(events.ObservationConfirmed{Tab: ob.r.Tab, Anchor: g.Anchor, Binding: rs.Binding, Entity: ob.r.Entity, ID: g.Anchor,
			FieldHashes: agreed, RowHash: g.Hash})
		return nil
	}
	if len(stale) > 0 {
		// The row lost a system write (its guard met a person's edit of
		// another cell): write canonical again, guarded by what it shows.
		ob.c.Queue = append(ob.c.Queue, Queue{Target: ob.sheet.Target(ob.r.Tab, g.Anchor), Op: events.OpUpdate, Values: stale,
			Entity: ob.r.Entity, ID: g.Anchor, ExpectedHash: g.Hash})
	}
	return nil
}

// accept turns a person's edits into canonical state and the entity in the
// same commit, without echo: only the System row is rewritten.
func (ob *observation) accept(g *GridRow, rs RowState, edits map[string]any, shown map[string]string) error {
	d, err := DecidePersist(rs.Entity, Persist{Entity: ob.r.Entity, ID: g.Anchor, Values: edits}, ob.now)
	if err != nil || len(d.Events) == 0 {
		return err
	}
	ob.c.AddDecision(d)
	ob.stats.Accepted++
	ob.add(events.ObservationAccepted{Tab: ob.r.Tab, Anchor: g.Anchor, Binding: rs.Binding, Entity: ob.r.Entity, ID: g.Anchor,
		Fields: edits, FieldHashes: shown, RowHash: g.Hash})
	sys := ob.sheet.RowTabs(ob.r.Entity)[0].Tab
	ob.c.Queue = append(ob.c.Queue, Queue{Target: ob.sheet.Target(sys, g.Anchor), Op: events.OpUpdate, Values: edits,
		Entity: ob.r.Entity, ID: g.Anchor})
	return nil
}

// refreshAudit: a person typed again in a conflicted cell (a new
// candidate a of the open conflict cid): its Sync_Conflicts row shows the
// new sheet value, and any choice made there against the old one is
// cleared in the same write (it was made before the row changed).
func (ob *observation) refreshAudit(cid, anchor string, sf SheetField, a string, sheetVal any) {
	if a == sf.CandidateHash {
		return
	}
	ob.c.Queue = append(ob.c.Queue, Queue{Target: ob.sheet.Target(ob.sheet.ConflictsTab(), cid), Op: events.OpUpdate,
		Entity: ob.r.Entity, ID: anchor, Values: ob.sheet.AuditRefreshed(Render(sheetVal))})
}

// candidate records value A against canonical B (I11): the active candidate
// with its candidate-time full-row visible hash and revision and, unless
// the field's conflict is already open, an OPEN conflict and the OPEN audit
// row on Sync_Conflicts; a new candidate of an open conflict refreshes
// its audit row (refreshAudit). Nothing else: polling never resolves.
func (ob *observation) candidate(g *GridRow, rs RowState, field, a string) {
	sf := rs.Sheet[field]
	cid, opening := sf.ConflictID, sf.ConflictID == ""
	if opening {
		cid = ConflictID(rs.Binding, field, sf.CandidateEpoch)
	}
	rev := rs.Entity.Fields[field].Revision
	sheetVal, sysVal := g.Values[field], rs.Canonical[field]
	ob.stats.Candidates++
	ob.add(events.CandidateDetected{Tab: ob.r.Tab, Anchor: g.Anchor, Binding: rs.Binding, Entity: ob.r.Entity, ID: g.Anchor,
		Field: field, CandidateHash: a, CandidateValue: sheetVal, Epoch: sf.CandidateEpoch, VisibleRevision: rs.VisibleRevision,
		VisibleHash: g.Hash, CanonicalRevision: rev, ConflictID: cid, SheetValue: Render(sheetVal)})
	if !opening {
		ob.refreshAudit(cid, g.Anchor, sf, a, sheetVal)
		return
	}
	opened := events.ConflictOpened{ConflictID: cid, Entity: ob.r.Entity, ID: g.Anchor, Field: field, Tab: ob.r.Tab,
		Anchor: g.Anchor, Binding: rs.Binding, CanonicalRevision: rev, CandidateHash: a, CandidateEpoch: sf.CandidateEpoch,
		VisibleRevision: rs.VisibleRevision, VisibleHash: g.Hash, SystemValue: Render(sysVal), SheetValue: Render(sheetVal)}
	stream := events.ConflictStream(cid)
	// One conflict per binding, field and candidate epoch: the stream is new
	// (appended at any version, so a replay of the same candidate can never
	// block the observation).
	ob.c.Add(stream, events.AnyVersion, events.New(stream, opened, ob.now))
	ob.c.Queue = append(ob.c.Queue, Queue{Target: ob.sheet.Target(ob.sheet.ConflictsTab(), cid), Op: events.OpAppend,
		Entity: ob.r.Entity, ID: g.Anchor, Values: ob.sheet.AuditOpened(opened, ob.now)})
}

// Reexamined is what a tab's layout migration does to the active evidence
// a read under the old layout recorded on its rows: it clears it (in id
// order). A cell the old column's kind could not hold may hold the new
// one's, and a column may show another field now, while the row's hash,
// which the evidence is matched by, is unchanged: evidence kept would
// let every quick poll certify the row unread. Cleared, the row is
// decided again under the new layout by the next poll, quick or full,
// which records the evidence afresh where it still holds. Deletion
// evidence (no row to read) stays.
func Reexamined(active map[string]Quarantine) []events.RowQuarantineCleared {
	var out []events.RowQuarantineCleared
	for _, id := range sortedKeys(active) {
		if q := active[id]; q.RowHash != "" {
			out = append(out, events.RowQuarantineCleared{Tab: q.Tab, QuarantineID: id, Anchor: q.Anchor})
		}
	}
	return out
}
