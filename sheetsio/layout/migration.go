package layout

import (
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Retired columns. When a field people edit leaves an Input tab (dropped,
// or no longer editable) while one of its cells holds a person's value the
// store never imported, the column is kept: renamed "<field> (retired)"
// and moved after the anchor, outside the layout. Header validation
// accepts such columns there (ValidateHeader); their cells are never read
// as values.

// RetiredSuffix ends the header of a retired column.
const RetiredSuffix = " (retired)"

var retiredPattern = regexp.MustCompile(`^.+ \(retired(?: [0-9]+)?\)$`)

// IsRetired reports whether header names a retired column
// ("<field> (retired)" or "<field> (retired N)").
func IsRetired(header string) bool { return retiredPattern.MatchString(header) }

// RetiredName is the header a retired column of field gets: "<field>
// (retired)", or "<field> (retired N)" (N = 2, 3, …) when taken says the
// plainer name is already used on the tab.
func RetiredName(field string, taken func(string) bool) string {
	name := field + RetiredSuffix
	for n := 2; taken(name); n++ {
		name = field + " (retired " + strconv.Itoa(n) + ")"
	}
	return name
}

// MatchHeader reports whether the header row got shows spec exactly: its
// headers, in order, at their positions, then only blank cells and
// retired columns (ValidateHeader accepts it). A row that shows spec is
// what the store wrote when spec was the tab's layout; any other row (a
// person renamed, moved or added a header) does not match. retired are
// the retired columns after the layout, by position.
func MatchHeader(spec TabSpec, got []any) (retired map[int]string, ok bool) {
	rep, err := ValidateHeader(spec, got)
	if err != nil {
		return nil, false
	}
	return rep.Retired, true
}

// ColumnPlan is how a tab laid out by an older declaration becomes its
// current layout: which old column each new one continues (kept cells,
// possibly under a new header), which are new to the tab (filled from
// canonical state), which old ones are removed and which are kept
// retired after the anchor.
type ColumnPlan struct {
	Old, New TabSpec
	// Source is, for each column of New, the name in Old of the column it
	// continues ("" for a column new to the tab).
	Source []string
	// Drop lists the columns of Old that are removed.
	Drop []string
	// Retire lists the columns of Old kept after the anchor, each with
	// the retired header it gets (same order).
	Retire, RetiredAs []string
}

// PlanColumns plans old → cur. follow maps a column of old to the name of
// the field it shows now (renames followed; false when its field is
// gone); retire says whether a column that leaves the tab is kept
// retired; taken tells the retired headers already used on the tab.
func PlanColumns(old, cur TabSpec, follow func(string) (string, bool), retire func(string) bool, taken func(string) bool) ColumnPlan {
	p := ColumnPlan{Old: old, New: cur, Source: make([]string, len(cur.Columns))}
	used := map[string]bool{}
	for _, c := range old.Columns {
		name, ok := c.Name, true
		if c.Name != AnchorHeader {
			name, ok = follow(c.Name)
		}
		if i := cur.ColumnIndex(name); ok && i >= 0 && p.Source[i] == "" {
			p.Source[i] = c.Name
			continue
		}
		if !retire(c.Name) {
			p.Drop = append(p.Drop, c.Name)
			continue
		}
		as := RetiredName(c.Name, func(n string) bool { return used[n] || taken(n) })
		used[as] = true
		p.Retire, p.RetiredAs = append(p.Retire, c.Name), append(p.RetiredAs, as)
	}
	return p
}

// Changed reports whether the plan changes anything: a column added,
// removed, retired, moved, renamed or retyped.
func (p ColumnPlan) Changed() bool {
	if len(p.Drop) > 0 || len(p.Retire) > 0 || len(p.Old.Columns) != len(p.New.Columns) {
		return true
	}
	for i, src := range p.Source {
		if src != p.Old.Columns[i].Name || p.Fill(i) {
			return true
		}
	}
	return false
}

// Fill reports whether column i of New is written from canonical state:
// it is new to the tab, or its kind changed.
func (p ColumnPlan) Fill(i int) bool {
	src := p.Source[i]
	if src == "" {
		return true
	}
	return p.Old.Columns[p.Old.ColumnIndex(src)].Kind != p.New.Columns[i].Kind
}

// Headers is the header row after the plan: New's headers, the retired
// columns already on the tab (by position), then the columns it retires.
func (p ColumnPlan) Headers(retired map[int]string) []string {
	out := p.New.Headers()
	for _, pos := range sortedPositions(retired) {
		out = append(out, retired[pos])
	}
	return append(out, p.RetiredAs...)
}

func sortedPositions(m map[int]string) []int { return slices.Sorted(maps.Keys(m)) }

// RetiredField is the field a retired header names ("notes (retired 2)"
// → "notes"); "" for another header.
func RetiredField(header string) string {
	if !IsRetired(header) {
		return ""
	}
	return header[:strings.LastIndex(header, " (retired")]
}
