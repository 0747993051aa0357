package sheetsio

import "github.com/hikoutei/hikoutei-go/sheetsio/layout"

// TabMigration asks Client.MigrateTab to bring one tab, laid out by an
// older declaration of the entities, to its current layout (the
// Workbook's schema) in one fenced batchUpdate: columns inserted where the
// layout puts them, removed, moved, renamed, kept retired after the
// anchor, and cells written from canonical state.
type TabMigration struct {
	// Tab is the logical tab.
	Tab string
	// Old is the layout the tab's header must show (layout.MatchHeader:
	// exact names in order, then blanks and retired columns). Any other
	// header writes nothing: the error is CodeHeaderDrift.
	Old layout.TabSpec
	// Fence is checked against the authority as a dispatch checks it
	// (I05), and mirrored in the same batchUpdate when the authority is
	// older; required.
	Fence *Fence
	// BeforeWrite, when set, is asked right before the batchUpdate (as
	// Batch.BeforeWrite): an error sends nothing.
	BeforeWrite func() error
	// Plan decides, from the tab as read under Old (TabSnapshot: rows,
	// anchors, cells, guard hashes; Header.Retired: the retired columns
	// it already shows), the column plan and the values the migration
	// writes. It runs once, between the read and the write; an error
	// writes nothing and is returned.
	Plan func(snap *TabSnapshot) (MigrationPlan, error)
}

// MigrationPlan is what a migration writes.
type MigrationPlan struct {
	// Columns is the column plan (layout.PlanColumns) from the tab's
	// Old layout to its current one.
	Columns layout.ColumnPlan
	// Fill holds, by anchor, values written into the row's cells, by
	// column of the current layout (never the anchor): the columns the
	// plan fills (layout.ColumnPlan.Fill) from canonical state. A cell
	// not named keeps what it holds, moved with its column (a new column
	// stays blank).
	Fill map[string]map[string]any
}

// MigrationResult is what a migration wrote.
type MigrationResult struct {
	// Authority is the authority the read found (before any mirror).
	Authority Authority
	// Header is the tab's header row now: the current layout, then the
	// retired columns.
	Header []string
	// HeaderAfter is the tab's whole header row as the batchUpdate's own
	// response showed it, right after the write (nil when the response
	// did not show it). A header cell a person changed between the read
	// and the write, which the migration does not write, shows here.
	HeaderAfter []any
	// Rows are the rows read with an anchor, in sheet order: each one's
	// guard hash under the old layout (as read) and under the current
	// layout (as the batchUpdate left it).
	Rows []MigratedRow
}

// MigratedRow is one row a migration moved to the current layout.
type MigratedRow struct {
	Anchor   string
	SheetRow int
	Before   string // layout.TabSpec.RowHash under the old layout, as read
	After    string // under the current layout, as written
}
