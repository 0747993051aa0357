package sheetsio

import (
	"fmt"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// OpKind is the kind of a row operation.
type OpKind uint8

// Row operation kinds.
const (
	// OpAppend adds a new row carrying Anchor (fast append). If a row with the
	// same anchor already shows exactly the new row, the op is recognised as a
	// replay (StatusUnchanged) instead of appending a duplicate.
	OpAppend OpKind = iota + 1
	// OpUpdate writes the given cells of the row whose anchor is Anchor,
	// guarded by ExpectedHash (the full-row visible hash the caller last saw).
	OpUpdate
	// OpDelete deletes the row whose anchor is Anchor, guarded by
	// ExpectedHash (full-row compare-and-set).
	OpDelete
)

// String returns the stable lower-case name of the OpKind.
func (k OpKind) String() string {
	switch k {
	case OpAppend:
		return "append"
	case OpUpdate:
		return "update"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// Op is one row operation of a dispatch.
//
// ID identifies the op in the result (the effect id; unique in a Batch).
// Tab is the logical tab name (layout), never a title. Anchor is the row's
// anchor (the "__hikoutei_row_id" cell); rows are found by anchor only.
// Values maps column header → typed Go value (string, int64, float64, bool,
// time.Time, nil; see cell.Encode): for OpAppend the new row (absent columns
// are blank; the anchor column is filled from Anchor), for OpUpdate only the
// cells to change. ExpectedHash (OpUpdate, OpDelete) is the tab's guard hash (layout.TabSpec.RowHash) of
// the full encoded row the caller expects to find (see ExpectedRowHash).
// Receipt, when set, is written to the receipts tab in the same batchUpdate
// as the op, so the two land atomically.
//
// FirstSend (OpAppend only) is the caller's word that no earlier dispatch
// can have written this op: its first send (an effect's first claim). A
// batch of first-send appends only skips the preflight read while the
// Workbook's verified header and authority are fresh (gsheets.Config.TrustTTL):
// an appendCells request never overwrites a cell, and the receipt in the
// same batchUpdate identifies the row afterwards. A resend (a retry, a
// replay after an uncertain outcome, a recovered claim) leaves it false,
// so its preflight recognises a row that already landed (StatusUnchanged)
// instead of appending it twice.
type Op struct {
	ID           string
	Tab          string
	Kind         OpKind
	Anchor       string
	Values       map[string]any
	ExpectedHash string
	Receipt      *Receipt
	FirstSend    bool
}

// Receipt is the caller's part of a receipt row: EffectID (the receipt's
// anchor) and PayloadHash. The provider adds op, target tab, row binding,
// the row hash after the write, the fence epoch/token and the time.
type Receipt struct {
	EffectID    string
	PayloadHash string
}

// Fence is the writer identity carried on every mutation (I05). The
// dispatch reads the authority tab in its preflight: a higher remote epoch,
// the same epoch with another token, or another store id rejects the whole
// dispatch before anything is written; a lower or absent remote epoch is
// overwritten with this fence in the same batchUpdate.
type Fence struct {
	StoreID string
	Epoch   int64
	Token   string
}

// Batch is everything one dispatch sends to one spreadsheet. Fence nil
// skips the authority check (provisioning tools, tests); the effects
// dispatcher must always set it.
type Batch struct {
	Fence *Fence
	Ops   []Op
	// Notes are cell notes written in the same batchUpdate as the ops (no
	// extra request); their fates are in DispatchResult.Notes.
	Notes []Note
	// SweepNotes names row tabs whose data cells (every row below the
	// header, every layout column but the anchor) lose their notes before
	// Notes are written, in the same batchUpdate: a writer that does not
	// know which notes the sheet carries (a new run) starts from none.
	// Fates in DispatchResult.Swept.
	SweepNotes []string
	// BeforeWrite, when set, is asked right before each batchUpdate of
	// the dispatch (after the preflight read): an error sends nothing
	// more, and the ops not yet sent end StatusNotSent with it. A writer
	// that may have been deposed while it waited (paused past its lease)
	// refuses here, so a preflight read before the takeover does not
	// carry its write after it.
	BeforeWrite func() error
	// Head, when set with Fence, is the writer's hash-chain head, sampled
	// before the dispatch: the dispatch publishes it in the authority row
	// (its chain_head cell) inside its first batchUpdate whenever the cell
	// does not show exactly it — blank, typed by a person (whatever it
	// says, a head past the log's included) or an older head — unless
	// this client already wrote a higher one, so a head this writer
	// published never moves back. No request is added for it: a dispatch
	// with nothing else to write leaves it for the next.
	Head *ChainHead
	// Refresh, when set with Fence, has the dispatch rewrite the
	// authority row's fence cells with its own time (their updated_at)
	// even when they show exactly the fence: the writer's periodic
	// refresh of its authority rides in the dispatch's first
	// batchUpdate, on the authority its preflight read verified, instead
	// of costing a read and a write of its own. DispatchResult.Refreshed
	// tells whether it was written (a blind append reads no authority and
	// refreshes nothing).
	Refresh bool
}

// OpStatus is the fate of one Op.
type OpStatus uint8

// Op statuses. Only StatusApplied and StatusUnchanged mean the sheet shows
// the op's result; StatusUncertain needs a probe; the rest wrote nothing.
const (
	// StatusApplied: sent in a batchUpdate that succeeded.
	StatusApplied OpStatus = iota + 1
	// StatusUnchanged: the sheet already showed the op's postcondition (a
	// replay after an uncertain delivery); nothing was sent.
	StatusUnchanged
	// StatusGuardFailed: the row's precondition did not hold (Reason:
	// row_hash_mismatch, anchor_not_found, anchor_exists, anchor_duplicated);
	// nothing was written. ObservedHash holds the row's current hash.
	StatusGuardFailed
	// StatusBlocked: the tab is unusable (Reason: sheet_header_drift,
	// sheet_tab_missing); nothing was written. Err holds the diagnostic.
	StatusBlocked
	// StatusInvalid: the op itself is malformed (Reason: invalid_op,
	// unknown_tab, unknown_column, duplicate_target). A value Sheets cannot
	// hold does not make an op invalid: its cell is written as a marker
	// (OpResult.Marked).
	StatusInvalid
	// StatusUncertain: sent, but the outcome is unknown (Err is a
	// *WriteError with Outcome Uncertain); probe before retrying.
	StatusUncertain
	// StatusFailed: sent and explicitly rejected (Err is a *WriteError with
	// Outcome Terminal); nothing of its batchUpdate was applied.
	StatusFailed
	// StatusNotSent: planned but not sent because an earlier chunk of the
	// dispatch was uncertain or failed; retrying is safe.
	StatusNotSent
	// StatusMisdirected: an update was applied, but the batchUpdate's own
	// response shows its cells on another row (Reason write_misdirected,
	// C06): a person moved rows between the preflight and the write. The
	// intended row did not receive it; OpResult.Misdirected names the row
	// that did and the cells overwritten there. Its receipt was written and
	// must not be taken as proof.
	StatusMisdirected
)

var statusNames = map[OpStatus]string{
	StatusApplied: "applied", StatusUnchanged: "unchanged", StatusGuardFailed: "guard_failed",
	StatusBlocked: "blocked", StatusInvalid: "invalid", StatusUncertain: "uncertain",
	StatusFailed: "failed", StatusNotSent: "not_sent", StatusMisdirected: "misdirected",
}

// String returns the stable lower-case name of the OpStatus.
func (s OpStatus) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Guard and validation reasons (OpResult.Reason).
const (
	ReasonRowHashMismatch  = "row_hash_mismatch"
	ReasonAnchorNotFound   = "anchor_not_found"
	ReasonAnchorExists     = "anchor_exists"
	ReasonAnchorDuplicated = "anchor_duplicated"
	ReasonInvalidOp        = "invalid_op"
	ReasonUnknownTab       = "unknown_tab"
	ReasonUnknownColumn    = "unknown_column"
	ReasonDuplicateTarget  = "duplicate_target"
	// ReasonRowKeepsRetired: a delete of a row one of whose retired
	// columns holds a value (a person's, never imported) is refused
	// (StatusGuardFailed): the row stays for review.
	ReasonRowKeepsRetired = "row_keeps_retired_value"
	// ReasonWriteMisdirected: StatusMisdirected's reason.
	ReasonWriteMisdirected = "write_misdirected"
)

// OpResult is the outcome of one Op, in the order of Batch.Ops. Binding is
// layout.RowBindingID(Tab, Anchor). ObservedHash is the row's hash in the
// preflight read ("" if absent); WrittenHash the row's hash after the op
// ("" for a delete) — the value recorded in the receipt. Reason is a stable
// code for the non-applied statuses; Err the detailed error, if any.
// Marked lists, by column, the op's values Sheets cannot hold, written as
// their marker text instead (cell.Mark; WrittenHash covers the marker).
//
// Misdirected is set with StatusMisdirected only.
type OpResult struct {
	ID           string
	Status       OpStatus
	Reason       string
	Binding      string
	ObservedHash string
	WrittenHash  string
	Err          error
	Marked       []MarkedCell
	Misdirected  *Misdirection
}

// MarkedCell is one cell an op wrote as a marker: the column and why its
// value cannot be written. It never carries the value.
type MarkedCell struct {
	Column string
	cell.Mark
}

// DispatchResult reports one dispatch. Ops has one entry per Batch.Ops, in
// order. Authority is the authority observed in the preflight. Reads and
// Writes count the HTTP requests this dispatch issued (retries included);
// Chunks is the number of batchUpdate bodies sent and BodyBytes their
// bytes (the JSON of each body sent). Strays counts, per
// logical tab, non-blank cells outside the layout (ignored, reported; C05;
// Snapshot gives their positions).
type DispatchResult struct {
	Ops       []OpResult
	Notes     []NoteStatus // one per Batch.Notes, in order
	Swept     []NoteStatus // one per Batch.SweepNotes, in order
	Authority Authority
	// HeadShown is what the authority row's chain_head cell showed the
	// preflight read (Authority.Head; zero: blank or not SEQ:HASH), nil
	// when the dispatch did not read it (no Head, or a blind append). A
	// shown head past Batch.Head is no head of the log: a person typed it
	// (the dispatch rewrites it).
	HeadShown *ChainHead
	// Refreshed: the dispatch wrote the authority row's fence cells with
	// its time (Batch.Refresh, or the mirror of a newer fence).
	Refreshed bool
	Reads     int
	Writes    int
	Chunks    int
	BodyBytes int64
	Strays    map[string]int
}
