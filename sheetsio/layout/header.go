package layout

import (
	"fmt"
	"sort"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// HeaderReport describes a header row that matched its layout. Width is the
// number of expected columns; Ignored lists the zero-based positions of
// unnamed columns beyond Width that were present in the header row read.
type HeaderReport struct {
	Width   int
	Ignored []int
	// Retired are the retired columns among Ignored (IsRetired), by
	// position (nil when none).
	Retired map[int]string
}

// ValidateHeader checks the header row got (as returned by a values read:
// strings, possibly shorter than the layout, possibly with blank cells)
// against spec. Every expected header must appear exactly once, at its
// declared position; a named header the layout does not declare is an
// error; unnamed (blank) columns and retired columns (IsRetired) after
// the expected ones are ignored and reported in HeaderReport.Ignored. Any
// violation returns a *HeaderError (errors.Is ErrHeaderDrift) listing
// every issue found; positions are counted per name, so duplicates are
// reported, never resolved last-wins.
func ValidateHeader(spec TabSpec, got []any) (HeaderReport, error) {
	names := headerNames(got)
	positions := map[string][]int{}
	for i, n := range names {
		if n != "" && !(i >= len(spec.Columns) && IsRetired(n)) {
			positions[n] = append(positions[n], i)
		}
	}
	issues := expectedIssues(spec, positions)
	issues = append(issues, unknownIssues(spec, positions)...)
	if len(issues) > 0 {
		return HeaderReport{}, &HeaderError{Tab: spec.Name, Issues: issues}
	}
	rep := HeaderReport{Width: len(spec.Columns)}
	for i := len(spec.Columns); i < len(names); i++ {
		rep.Ignored = append(rep.Ignored, i)
		if names[i] != "" {
			if rep.Retired == nil {
				rep.Retired = map[int]string{}
			}
			rep.Retired[i] = names[i]
		}
	}
	return rep, nil
}

func headerNames(got []any) []string {
	out := make([]string, len(got))
	for i, v := range got {
		if v == nil {
			continue
		}
		s, ok := v.(string)
		if !ok {
			s = fmt.Sprint(v)
		}
		if strings.TrimSpace(s) != "" {
			out[i] = norm.NFC.String(s)
		}
	}
	return out
}

func expectedIssues(spec TabSpec, positions map[string][]int) []HeaderIssue {
	var issues []HeaderIssue
	for i, c := range spec.Columns {
		at := positions[c.Name]
		var code string
		switch {
		case len(at) == 0:
			code = IssueMissing
		case len(at) > 1:
			code = IssueDuplicated
		case at[0] != i:
			code = IssueMoved
		default:
			continue
		}
		issues = append(issues, HeaderIssue{Code: code, Header: c.Name, Columns: at, Expected: i})
	}
	return issues
}

func unknownIssues(spec TabSpec, positions map[string][]int) []HeaderIssue {
	var names []string
	for n := range positions {
		if spec.ColumnIndex(n) < 0 {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(a, b int) bool { return positions[names[a]][0] < positions[names[b]][0] })
	issues := make([]HeaderIssue, 0, len(names))
	for _, n := range names {
		issues = append(issues, HeaderIssue{Code: IssueUnknown, Header: n, Columns: positions[n], Expected: -1})
	}
	return issues
}

// Stray locates a non-blank cell outside the layout's columns: Row is the
// 1-based sheet row, Column the zero-based column. It never holds the value.
type Stray struct {
	Row    int
	Column int
}

// StrayCells lists the non-blank cells at column ≥ width in rows, where
// rows[0] is sheet row firstRow (1-based). Such cells are ignored and
// reported (C05), never imported.
func StrayCells(rows [][]any, width, firstRow int) []Stray {
	var out []Stray
	for r, row := range rows {
		for c := width; c < len(row); c++ {
			if s, ok := row[c].(string); row[c] != nil && (!ok || s != "") {
				out = append(out, Stray{Row: firstRow + r, Column: c})
			}
		}
	}
	return out
}

// Extension reports whether a header that drifted from spec only lacks
// spec's last columns (every issue is a missing column, and they are
// exactly the columns from the returned index on): a tab written by an
// earlier layout that a later one extends. Provisioning writes the missing
// header cells in place; nothing else is ever rewritten.
func (e *HeaderError) Extension(spec TabSpec) (int, bool) {
	from := len(spec.Columns)
	for _, is := range e.Issues {
		if is.Code != IssueMissing {
			return 0, false
		}
		from = min(from, is.Expected)
	}
	if from == 0 || len(e.Issues) != len(spec.Columns)-from {
		return 0, false
	}
	return from, true
}
