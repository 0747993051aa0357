package events

// Sync events. Stream "sync/<target>".
const (
	TypeSyncDiverged         Type = "sync.diverged"
	TypeSyncTargetBound      Type = "sync.target_bound"
	TypeSyncWriteMisdirected Type = "sync.write_misdirected"
)

// SyncStream is the stream of one sync target's events.
func SyncStream(target string) string { return "sync/" + target }

// SyncDiverged records that a sync target's authority stopped naming this
// writer (another store or a newer epoch): dispatching to it stopped.
type SyncDiverged struct {
	// Target is the sync target's name.
	Target string `canon:"target"`
	// Reason says what the authority named instead.
	Reason string `canon:"reason"`
}

// EventType implements Payload.
func (SyncDiverged) EventType() Type { return TypeSyncDiverged }

// SyncTargetBound records which sync target the store's outbox serves
// from now on. A target is a digest of the spreadsheet id ("ss-…"; the id
// itself never enters the log). Previous is the target served before (""
// = none recorded): a switch supersedes Previous's unsettled effects in
// the same unit, and the new spreadsheet is backfilled completely.
// Adopted is a legacy target name (from before targets were keyed by
// spreadsheet) whose effects now belong to Target; a store with several
// records one event per name.
type SyncTargetBound struct {
	// Target is the sync target bound.
	Target string `canon:"target"`
	// Previous is the target served before, if any.
	Previous string `canon:"previous,omitempty"`
	// Adopted is a legacy target name whose effects move to Target.
	Adopted string `canon:"adopted,omitempty"`
}

// EventType implements Payload.
func (SyncTargetBound) EventType() Type { return TypeSyncTargetBound }

// SyncWriteMisdirected is evidence that an update's cells landed on
// another row (C06): a person sorted, inserted or deleted rows between the
// dispatch's read and its write, and the write's own response showed
// another anchor at the written row. The intended update was superseded by
// a re-queued one (Requeued) and the displaced row's cells are rewritten
// from canonical state (Repair). The cells listed here were overwritten:
// their earlier content may have been a person's edit no poll had seen,
// and is lost. It never carries cell values.
type SyncWriteMisdirected struct {
	// Target is the sync target's name.
	Target string `canon:"target"`
	// EffectID is the misdirected effect (now superseded).
	EffectID string `canon:"effect_id,required"`
	// Tab is the logical tab name.
	Tab string `canon:"tab"`
	// Anchor is the row the update was meant for.
	Anchor string `canon:"anchor"`
	// SheetRow is the 1-based row that received the cells, right after the write.
	SheetRow int64 `canon:"sheet_row"`
	// DisplacedAnchor is that row's anchor ("" for a row without one).
	DisplacedAnchor string `canon:"displaced_anchor"`
	// Entity and ID name the displaced row's record ("" when the store
	// knows none: an anchorless row, or an anchor without a record).
	Entity string `canon:"entity"`
	ID     string `canon:"id"`
	// Cells lists the overwritten cells of the displaced row.
	Cells []MisdirectedCell `canon:"cells"`
	// Requeued is the effect re-queued for the intended row ("" when its
	// record is gone).
	Requeued string `canon:"requeued"`
	// Repair is the effect rewriting the displaced row's cells from
	// canonical state ("" when there is no record to repair it from).
	Repair string `canon:"repair"`
}

// MisdirectedCell is one overwritten cell of a displaced row.
type MisdirectedCell struct {
	// Column is the cell's column header.
	Column string `canon:"column"`
}

// EventType implements Payload.
func (SyncWriteMisdirected) EventType() Type { return TypeSyncWriteMisdirected }

func init() {
	register[SyncDiverged](1, "sync/<target>")
	register[SyncTargetBound](1, "sync/<target>")
	register[SyncWriteMisdirected](1, "sync/<target>")
}
