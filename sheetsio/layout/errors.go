package layout

import (
	"errors"
	"fmt"
	"strings"
)

// Header issue codes (HeaderIssue.Code). Stable snake_case strings.
const (
	// IssueMissing: an expected header is absent from the header row.
	IssueMissing = "header_missing"
	// IssueMoved: an expected header is present once but in another column.
	IssueMoved = "header_moved"
	// IssueDuplicated: an expected header appears more than once (C05).
	IssueDuplicated = "header_duplicated"
	// IssueUnknown: a named header the layout does not declare.
	IssueUnknown = "header_unknown"
)

// ErrHeaderDrift is matched (errors.Is) by *HeaderError: the tab's header row
// differs from the fixed layout, so the tab is blocked (fail closed).
var ErrHeaderDrift = errors.New("sheet_header_drift")

// ErrInvalidSchema is returned (wrapped) by NewSchema for an entity or column
// declaration that cannot be laid out (empty/duplicate/reserved names, no key,
// unknown kind, tab name collision).
var ErrInvalidSchema = errors.New("layout_schema_invalid")

// HeaderIssue is one diagnostic about a header row. Header is the expected
// (or, for IssueUnknown, the found) header text; Columns are the zero-based
// positions where it was found (empty when missing); Expected is its declared
// position, or -1 for an unknown header.
type HeaderIssue struct {
	Code     string
	Header   string
	Columns  []int
	Expected int
}

// HeaderError reports every issue found in one tab's header row. Tab is the
// logical tab name (never a spreadsheet id). errors.Is(err, ErrHeaderDrift).
type HeaderError struct {
	Tab    string
	Issues []HeaderIssue
}

// Error implements error; the text carries codes, declared header names and
// positions, never payloads: an unknown header is text a person typed into
// row 1 (possibly pasted data), so only its position is rendered (the text
// stays in Issues for a deliberate UI).
func (e *HeaderError) Error() string {
	parts := make([]string, 0, len(e.Issues))
	for _, is := range e.Issues {
		if is.Code == IssueUnknown {
			parts = append(parts, fmt.Sprintf("%s at %v", is.Code, is.Columns))
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %q at %v (expected column %d)", is.Code, is.Header, is.Columns, is.Expected))
	}
	return fmt.Sprintf("layout: tab %s header drift: %s", e.Tab, strings.Join(parts, "; "))
}

// Is makes errors.Is(err, ErrHeaderDrift) true.
func (e *HeaderError) Is(target error) bool { return target == ErrHeaderDrift }

func schemaErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidSchema}, args...)...)
}

// Errors of mapping the header row of a tab people kept onto an entity
// (MapHeader, for hikoutei adopt). Stable snake_case codes; the messages
// name columns by letter and fields by name, never a header's text.
var (
	// ErrAdoptHeaderDuplicate: two columns would hold one field (their
	// headers normalise alike, C05), or an explicit rule's header names
	// several columns: the adoption fails closed, never last-wins.
	ErrAdoptHeaderDuplicate = errors.New("adopt_header_duplicate")
	// ErrAdoptKeyColumnMissing: no column holds the entity's primary key.
	ErrAdoptKeyColumnMissing = errors.New("adopt_key_column_missing")
	// ErrAdoptMapInvalid: an explicit rule names no column of the tab or
	// a field the entity does not declare, or gives one field twice.
	ErrAdoptMapInvalid = errors.New("adopt_map_invalid")
)
