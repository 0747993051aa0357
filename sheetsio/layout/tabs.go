package layout

import "github.com/hikoutei/hikoutei-go/sheetsio/cell"

var anchorColumn = cell.Column{Name: AnchorHeader, Kind: cell.String, Key: true}

func withAnchor(cols []cell.Column) []cell.Column { return append(cols, anchorColumn) }

func fieldColumn(f Field) cell.Column { return cell.Column{Name: f.Name, Kind: f.Kind, Key: f.Key} }

func systemTab(e Entity) TabSpec {
	cols := make([]cell.Column, 0, len(e.Fields)+1)
	for _, f := range e.Fields {
		cols = append(cols, fieldColumn(f))
	}
	cols = withAnchor(cols)
	return TabSpec{Name: SystemTabName(e.Name), Role: RoleSystem, Entity: e.Name, Columns: cols, Anchor: len(cols) - 1}
}

// inputTab holds the key fields (so people see which record a row is) and
// the editable fields, in declaration order, then the anchor.
func inputTab(e Entity) TabSpec {
	var cols []cell.Column
	for _, f := range e.Fields {
		if f.Key || f.Editable {
			cols = append(cols, fieldColumn(f))
		}
	}
	cols = withAnchor(cols)
	return TabSpec{Name: InputTabName(e.Name), Role: RoleInput, Entity: e.Name, Columns: cols, Anchor: len(cols) - 1}
}

// Sync_Conflicts columns, in order.
const (
	ConflictID          = "conflict_id"
	ConflictEntity      = "entity"
	ConflictRecordKey   = "record_key"
	ConflictField       = "field"
	ConflictSystemValue = "system_value"
	ConflictSheetValue  = "sheet_value"
	ConflictStatus      = "status"
	ConflictOpenedAt    = "opened_at"
	ConflictResolvedAt  = "resolved_at"
	// ConflictResolution is the cell a person sets to resolve the
	// conflict from the sheet (a dropdown: ChoiceKeepSystem, ChoiceUseSheet).
	ConflictResolution = "resolution"
	// ConflictResult says what became of the conflict and of a choice
	// made in the sheet (applied, or not applied and why).
	ConflictResult = "resolution_result"
)

// The choices of the resolution cell, as the dropdown offers them.
const (
	ChoiceKeepSystem = "keep system"
	ChoiceUseSheet   = "use sheet"
)

// conflictsTab: the resolution columns come after the anchor, so a
// Sync_Conflicts tab written before they existed is their prefix and is
// extended in place (see ExtendsHeader).
func conflictsTab() TabSpec {
	s := cell.String
	cols := withAnchor([]cell.Column{
		{Name: ConflictID, Kind: s, Key: true}, {Name: ConflictEntity, Kind: s}, {Name: ConflictRecordKey, Kind: s},
		{Name: ConflictField, Kind: s}, {Name: ConflictSystemValue, Kind: s}, {Name: ConflictSheetValue, Kind: s},
		{Name: ConflictStatus, Kind: s}, {Name: ConflictOpenedAt, Kind: cell.Time}, {Name: ConflictResolvedAt, Kind: cell.Time},
	})
	anchor := len(cols) - 1
	cols = append(cols, cell.Column{Name: ConflictResolution, Kind: s, Person: true,
		Choices: []string{ChoiceKeepSystem, ChoiceUseSheet}}, cell.Column{Name: ConflictResult, Kind: s})
	return TabSpec{Name: ConflictsTab, Role: RoleConflicts, Columns: cols, Anchor: anchor}
}

// _hikoutei_receipts columns, in order. One receipt row covers the ops of
// one batchUpdate (or part of them, when their entries exceed one cell):
// receipt_id is its anchor; entries lists one entry per effect (see
// sheetsio.FormatReceiptEntries for its forms) and effects counts them.
const (
	ReceiptID        = "receipt_id"
	ReceiptEpoch     = "epoch"
	ReceiptToken     = "token"
	ReceiptWrittenAt = "written_at"
	ReceiptEffects   = "effects"
	ReceiptEntries   = "entries"
)

func receiptsTab() TabSpec {
	s := cell.String
	cols := withAnchor([]cell.Column{
		{Name: ReceiptID, Kind: s, Key: true}, {Name: ReceiptEpoch, Kind: cell.Int}, {Name: ReceiptToken, Kind: s},
		{Name: ReceiptWrittenAt, Kind: cell.Time}, {Name: ReceiptEffects, Kind: cell.Int}, {Name: ReceiptEntries, Kind: s},
	})
	return TabSpec{Name: ReceiptsTab, Role: RoleReceipts, Columns: cols, Anchor: len(cols) - 1, Hidden: true}
}

// _hikoutei_authority columns, in order; the authority is the single row 2.
const (
	AuthorityStoreID   = "store_id"
	AuthorityEpoch     = "epoch"
	AuthorityToken     = "token"
	AuthorityUpdatedAt = "updated_at"
	// AuthorityChainHead holds the writer's hash-chain head, "SEQ:HASH"
	// (the form `hikoutei audit verify --pin` reads), refreshed by the
	// dispatches; the fence reads only the columns before it.
	AuthorityChainHead = "chain_head"
)

func authorityTab() TabSpec {
	cols := []cell.Column{
		{Name: AuthorityStoreID, Kind: cell.String}, {Name: AuthorityEpoch, Kind: cell.Int},
		{Name: AuthorityToken, Kind: cell.String}, {Name: AuthorityUpdatedAt, Kind: cell.Time},
		{Name: AuthorityChainHead, Kind: cell.String},
	}
	return TabSpec{Name: AuthorityTab, Role: RoleAuthority, Columns: cols, Anchor: -1, Hidden: true}
}
