package sheetsio

import (
	"context"

	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// Client is what the sync engine asks of a spreadsheet: exactly the calls
// its dispatcher, poller and startup make. Package gsheets implements it
// over the Google Sheets API (gsheets.New); the engine never sees which
// client it drives. Every method is safe for concurrent use. Errors are an
// *Error (a read, or a rejected request: errors.Is against the Err*
// sentinels, CodeOf for the code) or, for a write, a *WriteError whose
// Outcome tells whether anything may have been applied; an HTTP failure
// is reachable under either as an *HTTPError (HTTPStatus).
type Client interface {
	// Provision binds schema to the spreadsheet spreadsheetID: it creates
	// the tabs that are missing (with their header row and formats) and
	// binds every logical tab to its sheetId. It is idempotent: after a
	// lost response a re-run finds the tabs and writes nothing. With a
	// non-nil Workbook the error may be an *Error CodeHeaderDrift joining
	// each drifted tab's *layout.HeaderError: those tabs stay blocked and
	// the other tabs work.
	Provision(ctx context.Context, spreadsheetID string, schema *layout.Schema) (*Workbook, error)

	// Reprovision runs Provision's steps on a bound Workbook, creating
	// again (empty, with their header) the tabs a person deleted, and
	// returns the logical tabs it created.
	Reprovision(ctx context.Context, w *Workbook) ([]string, error)

	// Dispatch carries a batch of guarded row operations, the receipts
	// of the effects they apply and the fence check of the writer. The
	// error is non-nil only when nothing was written (a read error, an
	// authority that shows another writer: CodeAuthorityStale,
	// CodeAuthorityForeign, CodeAuthorityInvalid, or CodeInvalidBatch);
	// otherwise every op's fate is in DispatchResult.Ops (see OpStatus).
	Dispatch(ctx context.Context, w *Workbook, b Batch) (*DispatchResult, error)

	// SnapshotKnown reads the named logical tabs in full (TabSnapshot).
	// A tab whose header drifted or that is missing has its Err set; the
	// error is for the read as a whole.
	SnapshotKnown(ctx context.Context, w *Workbook, tabs ...string) (map[string]*TabSnapshot, error)

	// SnapshotChecked is SnapshotKnown where each tab with a RowCheck in
	// checks is certified by it as the read arrives (TabSnapshot.Digested:
	// no row decoded) or, when the check cannot certify it, decoded in
	// full.
	SnapshotChecked(ctx context.Context, w *Workbook, checks map[string]RowCheck, tabs ...string) (map[string]*TabSnapshot, error)

	// SnapshotUnchanged reports whether a read of tabs as SnapshotChecked
	// reads them digests to known (the TabSnapshot.Body of an earlier
	// read of the same tabs), decoding nothing.
	SnapshotUnchanged(ctx context.Context, w *Workbook, known BodyDigest, tabs ...string) (bool, error)

	// ReadGrid reads the named logical tabs with grid data, so a formula,
	// an error value or a merged cell shows in cell.Observed rather than
	// as a value.
	ReadGrid(ctx context.Context, w *Workbook, tabs ...string) (map[string]*GridSnapshot, error)

	// ReadGridKnown is ReadGrid that digests the read (GridSnapshot.Body)
	// and, when known is not zero and the read digests to it, decodes
	// nothing: every tab found is Undecoded (an idle store's passes read
	// the same bytes again and again). A read that does not is made
	// again and decoded.
	ReadGridKnown(ctx context.Context, w *Workbook, known BodyDigest, tabs ...string) (map[string]*GridSnapshot, error)

	// ReadGridRows is ReadGrid limited to some rows per tab (GridRequest).
	// Row numbers are where the caller last saw the rows, so the caller
	// checks each row's anchor.
	ReadGridRows(ctx context.Context, w *Workbook, reqs map[string]GridRequest) (map[string]*GridSnapshot, error)

	// ReadReceipts returns the receipts of the given effect ids that
	// exist; a missing id is absent from the map. Errors: read errors and
	// those of ReceiptsFrom.
	ReadReceipts(ctx context.Context, w *Workbook, effectIDs ...string) (map[string]ReceiptRecord, error)

	// ReadAuthority reads the authority row: the fence of the writer the
	// spreadsheet last accepted. Errors: read errors, CodeTabMissing or
	// CodeHeaderDrift for the tab, CodeAuthorityInvalid for a bad row.
	ReadAuthority(ctx context.Context, w *Workbook) (Authority, error)

	// WriteAuthority writes f into the authority row unconditionally (a
	// writer taking over). Errors: CodeTabMissing when the tab is unbound;
	// otherwise a *WriteError.
	WriteAuthority(ctx context.Context, w *Workbook, f Fence) error

	// ReadHeaders reads row 1 of the named logical tabs as it is,
	// whatever it holds (one read request once the sheetIds are known).
	// A tab missing from the spreadsheet is absent from the map.
	ReadHeaders(ctx context.Context, w *Workbook, tabs ...string) (map[string][]any, error)

	// MigrateTab brings one tab from an older layout to its current one
	// (TabMigration): one read of the tab and the authority, the fence
	// checked as a dispatch checks it, then one batchUpdate (more only
	// when the cells to write exceed the batch size; the column changes
	// always ride in the first). Errors: read errors; CodeHeaderDrift
	// (the header no longer shows m.Old) or CodeTabMissing, nothing
	// written; the authority errors of Dispatch; Plan's error; a
	// *WriteError (Uncertain: the header tells afterwards whether it
	// landed).
	MigrateTab(ctx context.Context, w *Workbook, m TabMigration) (*MigrationResult, error)

	// LastFailure is the error of the client's newest call when it
	// failed (after its retries), nil before any call and once a later
	// call succeeded. It never waits: health reports read it while a
	// request hangs.
	LastFailure() error

	// Adopt lends the client a store's logger and observer (Hooks): the
	// logger only when the client was built without one, the observer
	// when h has one. A client shared by several stores reports to the
	// last one that adopted it. Safe while requests run.
	Adopt(h Hooks)
}
