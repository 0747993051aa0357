package events

// Sync events. Stream "sync/<target>".
const (
	TypeSyncDiverged         Type = "sync.diverged"
	TypeSyncTargetBound      Type = "sync.target_bound"
	TypeSyncTabRouted        Type = "sync.tab_routed"
	TypeSyncWriteMisdirected Type = "sync.write_misdirected"
	TypeSheetLayoutMigrated  Type = "sheet.layout_migrated"
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

// SyncTabRouted records which sync target shows an entity tab from now
// on, once routes send entities to other spreadsheets than the store's
// default one. Previous is the target that showed it before ("" = none
// recorded: it is where the routes put it): a move supersedes
// Previous's unsettled effects on the tab in the same unit, forgets what
// Previous showed of it, and Target is backfilled with its rows
// completely.
type SyncTabRouted struct {
	// Target is the sync target that shows Tab.
	Target string `canon:"target"`
	// Previous is the target that showed it before, if any.
	Previous string `canon:"previous,omitempty"`
	// Tab is the logical tab name.
	Tab string `canon:"tab"`
}

// EventType implements Payload.
func (SyncTabRouted) EventType() Type { return TypeSyncTabRouted }

// SyncWriteMisdirected is evidence that an update's cells landed on
// another row: a person sorted, inserted or deleted rows between the
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

// SheetLayoutMigrated records that a tab of a sync target, which showed
// the layout of an older declaration of the entities (its header row
// exactly), was brought to the current layout in one fenced batchUpdate:
// columns inserted where the layout puts them and filled from canonical
// state, removed, moved, renamed, rewritten after a retype; a column
// people edit that held a value never imported was kept after the anchor
// under a retired header instead of being removed. From this event on
// the tab is read in the current layout: Rows carries each row's new
// visible hash (what the guard of the store's next write to the row
// expects), and a row hash recorded as evidence of a held row (an open
// conflict's candidate) follows its row to the hash the migration left
// on it. A tab of many rows is recorded as several such events of the
// same unit, each listing a part of the rows (the first one the retired
// and renamed columns). It never carries cell values.
type SheetLayoutMigrated struct {
	// Target is the sync target's name.
	Target string `canon:"target"`
	// Tab is the logical tab name.
	Tab string `canon:"tab,required"`
	// OldHeader is the header the tab showed: the older layout, then any
	// retired columns it already had.
	OldHeader []SheetColumn `canon:"old_header"`
	// NewHeader is the header it shows now: the current layout, then the
	// retired columns.
	NewHeader []SheetColumn `canon:"new_header"`
	// Retired lists the columns this migration kept retired.
	Retired []RetiredColumn `canon:"retired,omitempty"`
	// Renamed lists the kept columns whose header changed (a renamed
	// field): what the store knows a row's cell shows follows the column.
	Renamed []ColumnRename `canon:"renamed,omitempty"`
	// Rows lists the rows of the tab the store shows, by anchor.
	Rows []MigratedRow `canon:"rows"`
	// Recovered is true when the store found the tab already in the
	// current layout without a record of its migration (the response of
	// its batchUpdate was lost, or the process stopped before recording
	// it): Rows then expect canonical state.
	Recovered bool `canon:"recovered,omitempty"`
}

// SheetColumn is one header cell of a tab.
type SheetColumn struct {
	// Header is the header cell's text.
	Header string `canon:"header"`
}

// RetiredColumn is a column people edited that left the layout (its field
// was dropped or is no longer editable) and was kept, outside the
// layout, because a cell held a person's value the store never imported.
type RetiredColumn struct {
	// Field is the column's header in the older layout.
	Field string `canon:"field"`
	// Header is its header now, "<field> (retired)".
	Header string `canon:"header"`
	// Cells counts the cells that held a value never imported.
	Cells int64 `canon:"cells"`
}

// ColumnRename is one kept column whose header changed.
type ColumnRename struct {
	// From is the column's header in the older layout, To its header now.
	From string `canon:"from"`
	To   string `canon:"to"`
}

// MigratedRow is one row of a migrated tab.
type MigratedRow struct {
	// Anchor is the row's anchor.
	Anchor string `canon:"anchor"`
	// Hash is the row's visible hash from now on: what the store showed
	// on it, in the current layout.
	Hash string `canon:"hash"`
	// Before is the row's hash as the migration read it, in the older
	// layout: a write queued before, guarded by it, is guarded from now on
	// by the hash the migration left on the row. In a recovered migration
	// it is the row the store last showed, or the row as read when it
	// holds a value the store did not write (then nothing follows).
	Before string `canon:"before"`
	// After is the hash the migration left on the row when it differs
	// from Hash (the row held cells the store did not write: an edit not
	// imported yet, an open conflict's candidate); empty otherwise.
	After string `canon:"after,omitempty"`
	// Differs is true when the migration left the row of a live record
	// differing from canonical state: it shows After, or it shows what
	// the store last wrote while canonical state moved on (sync health
	// leaves such a row out while a write of it is in flight). Sync
	// health counts such a row as diverged, across restarts, until a
	// write or an accepted edit reaches it or a reconciliation pass
	// compares the tab; not while people hold it (an open conflict, a
	// candidate, quarantine). Absent in migrations recorded before it.
	Differs bool `canon:"differs,omitempty"`
	// Shown holds, on an Input row, the hash (events.Hash) of each value
	// the migration wrote in a column people edit, by field: what the
	// store knows those cells show.
	Shown map[string]string `canon:"shown,omitempty"`
}

// EventType implements Payload.
func (SheetLayoutMigrated) EventType() Type { return TypeSheetLayoutMigrated }

func init() {
	register[SheetLayoutMigrated](1, "sync/<target>")
	register[SyncDiverged](1, "sync/<target>")
	register[SyncTargetBound](1, "sync/<target>")
	register[SyncTabRouted](1, "sync/<target>")
	register[SyncWriteMisdirected](1, "sync/<target>")
}
