package hikoutei

import (
	"context"
	"errors"
	"fmt"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

// AdoptOptions asks Store.Adopt to take over a tab people kept in the
// store's spreadsheet (docs/adopt.md).
type AdoptOptions struct {
	// Tab is the title of the tab to adopt. Row 1 is its header.
	Tab string
	// Entity is the declared entity its rows become.
	Entity string
	// Map maps a column's header to a field where the header does not
	// name it (headers match field names with case, spaces, "_" and "-"
	// forgiven); a field of "-" sets the column aside. A rule wins over
	// matching by header.
	Map map[string]string
	// NumbersAsText lists text fields (the key among them) whose cells
	// people typed as numbers: an integer there is adopted as its decimal
	// text (123 → "123"). Without it such a cell is not adopted (a number
	// in a text field may have lost leading zeros).
	NumbersAsText []string
	// DryRun reads the tab and decides every row but writes nothing: no
	// record, no quarantine, no cell.
	DryRun bool
	// UnitSize is how many rows one unit of work commits (default 500, at
	// most 5,000).
	UnitSize int
}

// KeptSuffix ends the title an adopted tab is kept under:
// "Airports" becomes "Airports (before hikoutei)".
const KeptSuffix = " (before hikoutei)"

// AdoptReport is what Adopt found and did: every column and how it
// mapped, the fields no column holds, every data row's outcome (in sheet
// order), the totals, the title the tab is kept under and, for a real
// run, the units and events committed and the quarantine records made.
type AdoptReport struct {
	Tab, Entity, KeptAs                 string
	DryRun, Renamed                     bool
	Columns                             []AdoptColumn
	Missing                             []string
	Rows                                []AdoptRow
	Created, Unchanged, Skipped, Blank  int
	Units, Events, Quarantined, Cleared int
}

// AdoptColumn is one column of an adopted tab: its letter, header, the
// field it maps to and how.
type AdoptColumn struct {
	Index  int    // zero-based position
	Letter string // A1 letter
	Header string // the header text, NFC, trimmed
	Field  string // the field it maps to ("" when none)
	How    string // "header", "map", "ignored", "unknown" or "unnamed"
}

// AdoptRow is the outcome of one row of an adopted tab: create,
// unchanged (the store holds the key with the same values already) or
// skip (with the reason, the field and column, and every cell that did
// not decode).
type AdoptRow struct {
	SheetRow int    // 1-based
	Key      string // the key cell's text
	Hash     string // the full-row visible hash
	Outcome  AdoptOutcome
	// Reason (a code), Field and Column (the offending field and column
	// letter; empty for a duplicate) and Detail (a short note naming rows,
	// never a value) say why a row is skipped; Issues lists every cell of
	// the row that did not decode.
	Reason, Field, Column, Detail string
	Issues                        []AdoptIssue
}

// AdoptIssue is one cell of an adopted row that is not a value of its
// field, with the cell codec's reason.
type AdoptIssue struct {
	Field, Column, Reason string // Column: the column's letter
}

// AdoptOutcome is what becomes of an adopted row.
type AdoptOutcome = aggregates.AdoptOutcome

// Outcomes of an adopted row.
const (
	AdoptCreate    AdoptOutcome = "create"
	AdoptUnchanged AdoptOutcome = "unchanged"
	AdoptSkip      AdoptOutcome = "skip"
)

// Adopt takes over a tab people kept in the store's spreadsheet: the
// store must be open with SyncOptions for that spreadsheet, and declare
// the entity. It reads the tab once, maps its columns by header, and
// decodes every row with the cell rules the pollers use (plus dates kept
// as ISO 8601 text, and NumbersAsText). A dry run returns the report and
// writes nothing. A real run commits the rows that decode into new
// records, in units of UnitSize (actor "adopt"; an existing record is
// never changed: same values = unchanged, other values = not adopted),
// quarantines every other row with its reason (hikoutei quarantine
// list), then renames the tab to "<Tab> (before hikoutei)", untouched
// otherwise, and the store's System and Input tabs fill through the
// outbox. An interrupted run may be run again; a tab adopted already is
// ErrAdoptTabAdopted. Errors: ErrAdoptNeedsSync, ErrAdoptEntityNotDeclared,
// ErrAdoptTabNotFound, ErrAdoptTabAdopted, ErrAdoptTabReserved,
// ErrAdoptTabChanged, ErrAdoptHeaderDuplicate, ErrAdoptKeyColumnMissing,
// ErrAdoptMapInvalid, and Commit's and the spreadsheet's errors. An
// entity with personal fields cannot be adopted yet (ErrAdoptMapInvalid):
// the rows would reach the log unsealed (docs/erasure.md).
func (s *Store) Adopt(ctx context.Context, o AdoptOptions) (AdoptReport, error) {
	r, err := s.e.Adopt(ctx, engine.AdoptRequest{Tab: o.Tab, Entity: o.Entity, Map: o.Map, NumbersAsText: o.NumbersAsText,
		DryRun: o.DryRun, UnitSize: min(o.UnitSize, engine.MaxAdoptUnit)})
	return adoptReportOf(r), err
}

// adoptReportOf is the engine's report in the root's types.
func adoptReportOf(r engine.AdoptReport) AdoptReport {
	out := AdoptReport{Tab: r.Tab, Entity: r.Entity, KeptAs: r.KeptAs, DryRun: r.DryRun, Renamed: r.Renamed, Missing: r.Missing,
		Created: r.Created, Unchanged: r.Unchanged, Skipped: r.Skipped, Blank: r.Blank,
		Units: r.Units, Events: r.Events, Quarantined: r.Quarantined, Cleared: r.Cleared}
	if r.Columns != nil {
		out.Columns = make([]AdoptColumn, len(r.Columns))
	}
	for i, c := range r.Columns {
		out.Columns[i] = AdoptColumn(c)
	}
	if r.Rows != nil {
		out.Rows = make([]AdoptRow, len(r.Rows))
	}
	for i, d := range r.Rows {
		out.Rows[i] = adoptRowOf(d)
	}
	return out
}

func adoptRowOf(d aggregates.AdoptDecision) AdoptRow {
	row := AdoptRow{SheetRow: d.SheetRow, Key: d.Key, Hash: d.Hash, Outcome: d.Outcome, Reason: d.Reason, Field: d.Field,
		Column: d.Column, Detail: d.Detail}
	if d.Issues != nil {
		row.Issues = make([]AdoptIssue, len(d.Issues))
	}
	for i, is := range d.Issues {
		row.Issues[i] = AdoptIssue(is)
	}
	return row
}

// adoptPersonal refuses to adopt into an entity with personal fields: the
// rows would reach the log unsealed. The engine asks it before every
// adoption (Store.Adopt, hikoutei adopt). Without Go types (OpenDeclared)
// it reads the personal fields the key file recorded, and looks for a
// sealed value in the entity's records (a key file made by an earlier
// build records none).
func (s *Store) adoptPersonal(ctx context.Context, entity string) error {
	refuse := fmt.Errorf("%w: %s has personal fields: adopting a tab into it would log them unsealed (docs/erasure.md)", ErrAdoptMapInvalid, entity)
	for _, d := range s.byType {
		if d.name == entity && d.hasPersonal() {
			return refuse
		}
	}
	ring := s.keys.ring.Load()
	shape, ok := s.e.Registry().Shape(entity)
	if s.byType != nil || ring == nil || !ok {
		return nil
	}
	if len(ring.Personal(entity)) > 0 {
		return refuse
	}
	sealed, err := s.holdsSealed(ctx, shape)
	if err != nil || sealed {
		return errors.Join(err, refuse)
	}
	return nil
}
