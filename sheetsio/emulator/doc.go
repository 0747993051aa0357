// Package emulator is an in-process fake of the Google Sheets REST API v4,
// checked against recorded Google traffic (testdata/cassettes). The real
// google.golang.org/api/sheets/v4 client talks to Handler() through
// option.WithEndpoint(url) + option.WithoutAuthentication().
//
// Surface: spreadsheets create/get (properties, sheets with gridProperties,
// merges, protected ranges, developer metadata; includeGridData/ranges give
// userEnteredValue, effectiveValue, formattedValue and notes; `fields` masks
// are applied), spreadsheets.batchUpdate (atomic; replies map 1:1; unknown
// kinds answer 400; includeSpreadsheetInResponse with responseRanges and
// responseIncludeGridData renders updatedSpreadsheet after every request,
// in the same atomic step, and honours a `fields` mask), values get/batchGet/update/batchUpdate/append/clear/
// batchClear and their ByDataFilter forms, spreadsheets.getByDataFilter,
// developerMetadata get/search, and sheets copyTo. Not implemented (400):
// R1C1 ranges, charts, banding, filter views, pivot tables, formats (format
// requests are accepted and ignored). Rows and columns are inserted,
// deleted and moved (moveDimension) as Google does: values, notes, data
// validation rules (setDataValidation, stored, not enforced) and
// developer metadata go with their row or column (see move.go,
// validation.go).
//
// Values: RAW stores strings as text; USER_ENTERED parses like typing
// (formulas, numbers incl. "0050" → 50, %, $, en_US dates and times as serial
// numbers from 1899-12-30, TRUE/FALSE, a leading apostrophe forces text).
// Reads honour FORMATTED_VALUE / UNFORMATTED_VALUE / FORMULA and
// SERIAL_NUMBER / FORMATTED_STRING, trim trailing empty cells and rows, give
// an interior empty row as [] and omit "values" for an empty range.
//
// Formulas: the emulator keeps formulas as formulas (FORMULA render,
// userEnteredValue.formulaValue) and evaluates a small subset on read:
// arithmetic (+ - * / ^ %, unary minus, parentheses), & concatenation,
// comparisons, string/number/boolean literals, cell and range references
// (also to other tabs), and SUM, AVERAGE, MIN, MAX, COUNT, COUNTA, ABS, INT,
// ROUND, IF, AND, OR, NOT, CONCATENATE/CONCAT, LEN, UPPER, LOWER, TRIM.
// Division by zero gives errorValue DIVIDE_BY_ZERO ("#DIV/0!"), type
// mismatches VALUE, circular references REF; any other function gives
// errorValue type ERROR ("#ERROR!"). Callers must not rely on computed
// results of other spreadsheet functions.
//
// Models and faults, all off by default: Latency (GoogleLatency preset),
// Quota (GoogleQuota preset, sliding one-minute window, injectable Clock),
// scripted faults (ScriptFaults; FaultInterleave runs a Person's edit
// between a request's arrival and its application) and seeded random
// campaigns (SetFaultRates), MaxRequestBytes (400, as Google answers a body
// over GoogleMaxRequestBytes), Deny (403 PERMISSION_DENIED for a
// spreadsheet not shared with the caller). Callers (caller.go) are Google
// users told apart by their bearer token (Caller builds a client for one):
// each has its own per-user quota, Unshare denies one a spreadsheet (403)
// and Revoke refuses its credentials (401). Counters count every received API
// request per spreadsheet, CallerCounters per caller. Person edits like the UI without being counted.
// Cross-site requests are refused before anything runs (see guard.go): a
// Host that does not name the emulator (403, ErrForeignHost), a foreign
// Origin (403, ErrForeignOrigin), and a POST/PUT/PATCH/DELETE that is not
// application/json (415, ErrUnsupportedMediaType).
// Save/Load persist the state as JSON; GET / and /view/{id}[/{sheetId}]
// serve a read-only HTML view (view.go): a tab's cells as a FORMATTED_VALUE
// read returns them (at most 1,000 rows and 100 columns), a tab strip,
// noted cells highlighted, and a self-refresh every 5 s (?refresh=N, 0 off).
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package emulator
