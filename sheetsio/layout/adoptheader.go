package layout

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/hikoutei/hikoutei-go/internal/echo"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// How a column of an adopted tab was mapped (ColumnMap.How).
const (
	// MappedByHeader: the header names the field, case and spacing
	// forgiven (NormalizeHeader).
	MappedByHeader = "header"
	// MappedExplicitly: an explicit rule (--map HEADER=FIELD) named it.
	MappedExplicitly = "map"
	// MappedIgnored: an explicit rule (--map HEADER=-) set it aside.
	MappedIgnored = "ignored"
	// MappedUnknown: a named column no field matches; it is not imported
	// (its cells stay in the kept tab).
	MappedUnknown = "unknown"
	// MappedUnnamed: a column with a blank header (C05: ignored, reported).
	MappedUnnamed = "unnamed"
)

// IgnoreColumn is the field of an explicit rule that sets a column aside.
const IgnoreColumn = "-"

// ColumnMap is one column of a tab being adopted: its position (Index,
// zero-based; Letter, A1), the header text a person typed (NFC, trimmed),
// the field it maps to ("" when none) and how.
type ColumnMap struct {
	Index  int
	Letter string
	Header string
	Field  string
	How    string
}

// HeaderMap is how the columns of a tab people kept map onto an entity's
// fields: every column in order, the column of each mapped field, and the
// declared fields no column holds (Missing, in declaration order).
type HeaderMap struct {
	Columns []ColumnMap
	Field   map[string]int // field → index into Columns
	Missing []string
}

// NormalizeHeader is the form headers and field names are compared in:
// NFC, case-folded, every run of white space, "_" and "-" one "_", none
// at either end ("Last  Checked", "last_checked", "LAST-CHECKED" and
// " last checked " are all "last_checked").
func NormalizeHeader(s string) string {
	s = cases.Fold().String(norm.NFC.String(s))
	var b strings.Builder
	sep := false
	for _, r := range s {
		if unicode.IsSpace(r) || r == '_' || r == '-' {
			sep = b.Len() > 0
			continue
		}
		if sep {
			b.WriteByte('_')
			sep = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MapHeader maps the header row of a tab people kept (header: one text per
// column, "" for a blank cell) onto the fields of an entity (fields: the
// declared non-key fields; key: the primary key). explicit rules, header
// text → field name (or IgnoreColumn), win over matching by header; their
// header is matched as NormalizeHeader compares. A named column no field
// matches is MappedUnknown; a blank one MappedUnnamed. Errors (each names
// columns by letter and fields by name, never a header's text):
// ErrAdoptMapInvalid (a rule names no column, or an unknown field, or
// gives one field twice); ErrAdoptHeaderDuplicate (two columns would hold
// one field, or a rule's header names several columns: fail closed, C05);
// ErrAdoptKeyColumnMissing (no column holds the key).
func MapHeader(header []string, key string, fields []string, explicit map[string]string) (HeaderMap, error) {
	m := HeaderMap{Field: map[string]int{}}
	for i, h := range header {
		h = strings.TrimSpace(norm.NFC.String(h))
		c := ColumnMap{Index: i, Letter: a1.ColumnLabel(i), Header: h, How: MappedUnknown}
		if h == "" {
			c.How = MappedUnnamed
		}
		m.Columns = append(m.Columns, c)
	}
	declared := append([]string{key}, fields...)
	if err := m.applyExplicit(declared, explicit); err != nil {
		return HeaderMap{}, err
	}
	if err := m.matchHeaders(declared); err != nil {
		return HeaderMap{}, err
	}
	if _, ok := m.Field[key]; !ok {
		return HeaderMap{}, fmt.Errorf("%w: no column's header names the key %q (give --map HEADER=%s)", ErrAdoptKeyColumnMissing, key, key)
	}
	for _, f := range fields {
		if _, ok := m.Field[f]; !ok {
			m.Missing = append(m.Missing, f)
		}
	}
	return m, nil
}

// applyExplicit applies the explicit rules, in header order.
func (m *HeaderMap) applyExplicit(declared []string, explicit map[string]string) error {
	rules := make([]string, 0, len(explicit))
	for h := range explicit {
		rules = append(rules, h)
	}
	sort.Strings(rules)
	for _, h := range rules {
		at := m.columnsNamed(NormalizeHeader(h))
		switch {
		case len(at) == 0:
			return fmt.Errorf("%w: a --map rule names no column of the tab (rule for field %s)", ErrAdoptMapInvalid, echo.Quote(explicit[h]))
		case len(at) > 1:
			return fmt.Errorf("%w: a --map rule's header is the header of columns %s", ErrAdoptHeaderDuplicate, m.letters(at))
		}
		if err := m.assign(at[0], explicit[h], declared); err != nil {
			return err
		}
	}
	return nil
}

// assign maps column i to the field a rule names.
func (m *HeaderMap) assign(i int, field string, declared []string) error {
	if strings.TrimSpace(field) == IgnoreColumn {
		m.Columns[i].How = MappedIgnored
		return nil
	}
	f, ok := fieldNamed(declared, field)
	if !ok {
		return fmt.Errorf("%w: --map names field %s, which the entity does not declare (it declares %s)", ErrAdoptMapInvalid, echo.Quote(field), strings.Join(declared, ", "))
	}
	if j, taken := m.Field[f]; taken {
		return fmt.Errorf("%w: --map gives field %q to columns %s and %s", ErrAdoptMapInvalid, f, m.Columns[j].Letter, m.Columns[i].Letter)
	}
	m.Columns[i].Field, m.Columns[i].How = f, MappedExplicitly
	m.Field[f] = i
	return nil
}

// fieldNamed finds a declared field by its exact name, else by its
// normalised name when that is unambiguous.
func fieldNamed(declared []string, name string) (string, bool) {
	var found []string
	for _, f := range declared {
		if f == name {
			return f, true
		}
		if NormalizeHeader(f) == NormalizeHeader(name) {
			found = append(found, f)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

// matchHeaders maps every column no rule took whose header names a field
// no rule took. Two columns for one field fail closed.
func (m *HeaderMap) matchHeaders(declared []string) error {
	byNorm := map[string][]string{}
	for _, f := range declared {
		n := NormalizeHeader(f)
		byNorm[n] = append(byNorm[n], f)
	}
	claims := map[string][]int{}
	for i, c := range m.Columns {
		fs := byNorm[NormalizeHeader(c.Header)]
		if c.How != MappedUnknown || len(fs) != 1 {
			continue // taken by a rule, unnamed, unknown, or two fields normalise alike (a rule must choose)
		}
		if _, taken := m.Field[fs[0]]; !taken {
			claims[fs[0]] = append(claims[fs[0]], i)
		}
	}
	for _, f := range declared {
		at := claims[f]
		if len(at) > 1 {
			return fmt.Errorf("%w: columns %s all name field %q (keep one, or choose with --map)", ErrAdoptHeaderDuplicate, m.letters(at), f)
		}
		if len(at) == 1 {
			m.Columns[at[0]].Field, m.Columns[at[0]].How = f, MappedByHeader
			m.Field[f] = at[0]
		}
	}
	return nil
}

func (m *HeaderMap) columnsNamed(n string) []int {
	var out []int
	for i, c := range m.Columns {
		if c.Header != "" && NormalizeHeader(c.Header) == n {
			out = append(out, i)
		}
	}
	return out
}

func (m *HeaderMap) letters(at []int) string {
	ls := make([]string, len(at))
	for i, c := range at {
		ls[i] = m.Columns[c].Letter
	}
	return strings.Join(ls, ", ")
}
