package aggregates

import (
	"fmt"
	"time"

	"github.com/cespare/xxhash/v2"
)

// Inbound policy (docs/invariants.md "People's edits"), decided here:
//   - People edit only user-owned fields on <E>_Input. The key column and
//     the anchor column are system-owned: an edited key is quarantined
//     (key_edited), an edited anchor makes the row one without a known
//     anchor.
//   - A row without a known anchor is evidence, never an insert: the store
//     creates entities only from application commits.
//   - A malformed cell (number in a text column, inexact integer, formula,
//     error value, merged cell, edge-whitespace key) and a duplicated
//     anchor (I16) quarantine the whole row: nothing of it is written into
//     an entity table.
//   - A blank is an edit only if the sheet last showed a non-empty value;
//     a tab that suddenly reads empty is a suspected mass deletion and
//     nothing is applied row by row. A row gone from the tab is evidence of
//     the deletion of that key, never an entity removal; a sort changes
//     nothing.
//   - An accepted edit updates canonical state and the entity in the same
//     commit and is not echoed: only the <E>_System row is rewritten.
//   - Value A against canonical B where both moved since the sheet last
//     showed the field opens a candidate and a conflict (I11).

// Evidence reasons recorded by the inbound decisions (stable snake_case
// codes; cell decoding adds its own for malformed cells).
const (
	ReasonRowWithoutAnchor = "row_without_anchor"
	ReasonUnknownAnchor    = "unknown_anchor"
	ReasonOrphanRow        = "orphan_row"
	ReasonDuplicateAnchor  = "duplicate_anchor"
	ReasonKeyEdited        = "key_edited"
	ReasonRowDeleted       = "row_deleted"
	ReasonMassDeletion     = "suspected_mass_deletion"
	ReasonTabBlocked       = "tab_blocked"
)

// quarantineID identifies one piece of evidence: the same tab, anchor, row
// hash and reason always give the same id (idempotent polls).
func quarantineID(tab, anchor, rowHash, reason string) string {
	return fmt.Sprintf("q%016x", xxhash.Sum64String(tab+"\x00"+anchor+"\x00"+rowHash+"\x00"+reason))
}

// verdict classifies one user-owned cell of a row (see classifyField).
type verdict uint8

// Verdicts.
const (
	// verdictUnchanged: the cell shows canonical state.
	verdictUnchanged verdict = iota
	// verdictEdit: the sheet showed canonical state and a person changed it: accept.
	verdictEdit
	// verdictStale: the cell still shows what the system last wrote and canonical
	// moved on: the pending (or to be re-queued) write will fix it.
	verdictStale
	// verdictConflict: both sides changed the field since the sheet last showed it (I11).
	verdictConflict
)

// classifyField compares hashes of one field: observed (the cell now, A),
// shown (what the sheet last showed: the system's last applied write or
// the last accepted observation, S) and canonical (B). shownKnown is false
// when no write of this field was ever confirmed; then any difference is a
// conflict (no guessed baseline, I14). Blank and empty text hash equal
// (ShownHash). A blank cell is an Edit only if S was non-empty: implied,
// since S == B ≠ A.
func classifyField(observed, shown, canonical string, shownKnown bool) verdict {
	switch {
	case observed == canonical:
		return verdictUnchanged
	case !shownKnown:
		return verdictConflict
	case shown == canonical:
		return verdictEdit
	case observed == shown:
		return verdictStale
	}
	return verdictConflict
}

// TabExpectation is what the store expects an Input tab to show, which a
// values read is certified against:
//   - Rows: anchor → full-row visible hash the outbox (or the last accepted
//     observation) left on the row;
//   - Evidence: row hashes already recorded as evidence (active quarantine
//     or an active candidate's candidate-time row);
//   - Missing: anchors whose deletion is already evidence;
//   - Flagged: the tab's suspected mass deletion is already recorded;
//   - Since: the log sequence that set each expected row's visible state;
//   - InFlight: anchors with an effect not yet settled (pending,
//     processing, delivery uncertain).
//   - Lost: anchors whose newest write ended in conflict (it met a
//     person's edit and was not made) with no write applied since: never
//     certified nor skipped as unchanged.
//
// A row is expected only once an effect wrote it (or an observation
// accepted it): a row whose append has not been applied is never
// expected. Only a settled row (Settled) may count as missing: a row
// applied after the read's base, or with an effect in flight, may or may
// not show in a read that raced the dispatch, so its absence is no
// evidence of anything.
type TabExpectation struct {
	Rows     map[string]string
	Evidence map[string]bool
	// Quarantined are the row hashes of active quarantine records that
	// name a row: a read no longer showing one has evidence to clear.
	Quarantined map[string]bool
	Missing     map[string]bool
	Flagged     bool
	Since       map[string]uint64
	InFlight    map[string]bool
	Lost        map[string]bool
}

// Settled reports whether the expected row of anchor was last set at or
// before base (the checkpoint a read's expectation was taken at) and has
// no effect in flight: the read must show it, and its absence is deletion
// evidence.
func (x TabExpectation) Settled(anchor string, base uint64) bool {
	_, ok := x.Rows[anchor]
	return ok && x.Since[anchor] <= base && !x.InFlight[anchor]
}

// settledRows counts the expected rows Settled at base.
func (x TabExpectation) settledRows(base uint64) int {
	n := 0
	for a := range x.Rows {
		if x.Settled(a, base) {
			n++
		}
	}
	return n
}

// SheetField is one Input-row field's sheet-side state: what the sheet
// last showed, and the active candidate with its epoch and candidate-time
// row evidence.
type SheetField struct {
	ShownHash      string
	ShownKnown     bool
	CandidateHash  string // "" = none
	CandidateEpoch int64
	CandidateRow   string // candidate-time full-row visible hash
	CandidateRev   int64  // candidate-time full-row visible revision
	ConflictID     string
}

// Quarantine is one active piece of evidence of a tab.
type Quarantine struct {
	ID, Tab, Anchor, RowHash, Reason, Column string
	SheetRow                                 int64
}

// RowState is what the inbound decisions need to know of one anchor's
// Input row: its visible state, the entity it shows and its sheet-side
// field state.
type RowState struct {
	Binding         string
	Bound           bool   // an effect or accepted edit ever set the row's visible state
	VisibleHash     string // the row's full visible hash
	VisibleRevision int64
	VisibleSeq      uint64 // log sequence that last set it
	Exists          bool   // the entity exists
	Canonical       map[string]any
	Entity          EntityState
	InFlight        bool // an effect of the row has not settled
	Sheet           map[string]SheetField
	OpenConflicts   int // open conflicts on the row
}

// untouched: no effect in flight, no active candidate, no open conflict.
func (rs RowState) untouched() bool {
	for _, f := range rs.Sheet {
		if f.CandidateHash != "" || f.ConflictID != "" {
			return false
		}
	}
	return !rs.InFlight && rs.OpenConflicts == 0
}

// GridRow is one row of an Input tab read with grid data, decoded by the
// engine.
type GridRow struct {
	SheetRow int
	Anchor   string // the anchor cell (NFC), "" when blank or unreadable
	Hash     string // full-row visible hash
	Plain    bool   // no formula, error value or merge in any cell
	// AnchorReason, when set, says why the anchor cell is malformed.
	AnchorReason string
	// Malformed names the first malformed data cell, if any.
	Malformed *CellError
	// Values holds every data column's decoded value (Malformed unset).
	Values map[string]any
}

// CellError is a malformed cell: its column and the stable reason.
type CellError struct {
	Column, Reason string
}

// ShownRow is one non-blank row of an Input tab as one observation covers
// it: read with grid data (Grid set), or certified by the pass's values
// read and left out of a partial grid read (Grid nil: Anchor and Hash are
// the values read's), or Shifted: the grid read found another row where
// the values read showed this one.
type ShownRow struct {
	Anchor, Hash string
	Grid         *GridRow
	Shifted      bool
}

// TabRead is one Input tab as a poll read it.
type TabRead struct {
	Tab     string
	Entity  string   // the entity it shows
	Key     string   // the entity's primary key field
	User    []string // its user-owned fields, in declaration order
	Blocked string   // why the tab's rows could not be read ("" = read)
	Rows    []ShownRow
	Full    bool   // a safety full scan: every row is re-derived
	Base    uint64 // read-model checkpoint the pass read its expectation at
	// Empty: the tab holds nothing at all, its header row included
	// (cleared completely, or deleted and created again empty): Blocked
	// says the header is missing, but when rows are expected it is a
	// tab that suddenly reads empty (C04), not a drifted header.
	Empty bool
}

// TabState is the state an observation of one tab is decided against.
type TabState struct {
	Expect         TabExpectation
	Active         map[string]Quarantine // active evidence by id
	Rows           map[string]RowState   // by anchor, for every grid row with an anchor
	InboundVersion uint64
}

// ObserveStats counts what observations decided.
type ObserveStats struct {
	Rows        int // data rows examined
	Accepted    int // rows whose user edits became canonical
	Quarantined int // new quarantine / evidence records
	Candidates  int // candidates detected (conflicts opened or updated)
	Deferred    int // rows in transition, left for the next pass
	Events      int // events appended
}

// Add folds o into s.
func (s *ObserveStats) Add(o ObserveStats) {
	s.Rows, s.Accepted, s.Quarantined = s.Rows+o.Rows, s.Accepted+o.Accepted, s.Quarantined+o.Quarantined
	s.Candidates, s.Deferred, s.Events = s.Candidates+o.Candidates, s.Deferred+o.Deferred, s.Events+o.Events
}

// DecideTab decides one observation of an Input tab: evidence for what is
// not data, accepted edits, candidates and conflicts, rewrites of rows that
// lost a system write, and the clearing of evidence the tab no longer
// shows (see the policy above).
func DecideTab(r TabRead, st TabState, sheet Sheet, now time.Time) (Changes, ObserveStats, error) {
	ob := newObservation(r, st, sheet, now)
	err := ob.decide()
	return ob.c, ob.stats, err
}

// TabDecider is DecideTab taken a window of rows at a time, so that a
// caller reading a large tab holds the decoded rows and the row states of
// one window only: NewTabDecider with the anchors of every shown row, Rows
// for each window in the tab's order, then Finish. The decisions are
// DecideTab's, in the same order: r.Rows and st.Rows are not read.
type TabDecider struct{ ob *observation }

// NewTabDecider starts deciding tab r against st; copies counts the
// non-blank rows shown of each anchor ("" left out) and shown is the
// number of non-blank rows, over the whole tab.
func NewTabDecider(r TabRead, st TabState, sheet Sheet, now time.Time, copies map[string]int, shown int) *TabDecider {
	r.Rows, st.Rows = nil, nil
	ob := newObservation(r, st, sheet, now)
	ob.begin(copies, shown)
	return &TabDecider{ob: ob}
}

// Rows decides the next window of shown rows, states holding the state of
// each of their anchors as DecideTab's st.Rows would.
func (d *TabDecider) Rows(rows []ShownRow, states map[string]RowState) error {
	return d.ob.rows(rows, states)
}

// Finish decides what concerns the whole tab and returns the decision
// (since the last Take, when the caller took some).
func (d *TabDecider) Finish() (Changes, ObserveStats) {
	d.ob.finish()
	return d.ob.c, d.ob.stats
}

// Turn starts a new turn of a decision whose windows are committed one
// at a time: the windows after it are decided against the tab's inbound
// stream version, active evidence and now as that turn reads them (what
// the earlier turns committed included). Evidence an earlier turn
// recorded is active by then; evidence cleared meanwhile is not, and is
// recorded again where a later window still shows it. What the whole
// read shows (Finish: the rows no window showed, the evidence no window
// found) still covers every window.
func (d *TabDecider) Turn(inboundVersion uint64, active map[string]Quarantine, now time.Time) {
	ob := d.ob
	ob.st.InboundVersion, ob.st.Active, ob.now, ob.byRow = inboundVersion, active, now, nil
	ob.active = make(map[string]bool, len(active))
	for id := range active {
		ob.active[id] = true
	}
}

// Take returns what was decided since the start or the last Take (the
// caller commits it in this turn) and forgets it.
func (d *TabDecider) Take() Changes {
	c := d.ob.c
	d.ob.c = Changes{}
	return c
}
