// Package layout declares the fixed tab layout Hikoutei keeps in a
// spreadsheet and validates header rows against it.
//
// Per entity E: tab "E_System" (every column, then the anchor column) and
// tab "E_Input" (key and user-editable columns, then the anchor column
// "__hikoutei_row_id", the physical row identity). Shared: "Sync_Conflicts"
// (conflict audit), hidden "_hikoutei_receipts" (effect receipts) and hidden
// "_hikoutei_authority" (writer epoch/token/store id). Header rows are fixed;
// validation fails closed on drift and never builds a last-wins map.
//
// Stability: this is one of the engine's packages. Its Go API carries no
// stability promise (docs/stability.md): a release may change it.
// Applications use the root package (and gsync, observe, natsserver,
// hikouteitest), which do.
package layout

import (
	"maps"
	"regexp"
	"sort"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// Fixed tab names and the anchor column header.
const (
	AnchorHeader    = "__hikoutei_row_id"
	ConflictsTab    = "Sync_Conflicts"
	ReceiptsTab     = "_hikoutei_receipts"
	AuthorityTab    = "_hikoutei_authority"
	systemTabSuffix = "_System"
	inputTabSuffix  = "_Input"
)

// Role is what a tab is for.
type Role uint8

// Tab roles.
const (
	RoleSystem Role = iota + 1
	RoleInput
	RoleConflicts
	RoleReceipts
	RoleAuthority
)

// Field declares one entity column: its header Name, value Kind, whether it
// is (part of) the business Key, and whether people may edit it (Editable
// fields appear on the E_Input tab).
type Field struct {
	Name     string
	Kind     cell.Kind
	Key      bool
	Editable bool
}

// Entity declares a registered entity: its Name (tab prefix) and its ordered
// Fields (header order on the tabs).
type Entity struct {
	Name   string
	Fields []Field
}

// TabSpec is the fixed layout of one tab. Name is the logical name, which is
// also the title the tab is created with; Columns are the headers in order;
// Anchor is the index of the anchor column in Columns, or -1 (authority tab).
type TabSpec struct {
	Name    string
	Role    Role
	Entity  string
	Columns []cell.Column
	Anchor  int
	Hidden  bool
}

// RowHash is the row's guard hash: cell.VisibleHash of its cells with the
// Person columns left blank (the same as cell.VisibleHash for a tab
// without them). Every full-row compare-and-set on the tab uses it.
func (t TabSpec) RowHash(cells []any) string {
	var blanked []any
	for i, c := range t.Columns {
		if c.Person && i < len(cells) && cells[i] != nil {
			if blanked == nil {
				blanked = append([]any(nil), cells...)
			}
			blanked[i] = nil
		}
	}
	if blanked == nil {
		return cell.VisibleHash(cells)
	}
	return cell.VisibleHash(blanked)
}

// Headers returns the expected header row.
func (t TabSpec) Headers() []string {
	out := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		out[i] = c.Name
	}
	return out
}

// ColumnIndex returns the zero-based position of header name, or -1.
func (t TabSpec) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// Schema is the validated set of tabs for a spreadsheet: two per entity plus
// the three shared tabs. It is immutable after NewSchema.
type Schema struct {
	tabs  []TabSpec
	index map[string]int
}

var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`)

// NewSchema lays out the given entities. Entity names must match
// [A-Za-z][A-Za-z0-9_]{0,63} and be unique; each entity needs at least one
// Key field, unique non-empty field names, valid kinds, and no field named
// AnchorHeader. Violations return an error wrapping ErrInvalidSchema.
func NewSchema(entities ...Entity) (*Schema, error) {
	s := &Schema{index: map[string]int{}}
	for _, e := range entities {
		if err := validateEntity(e); err != nil {
			return nil, err
		}
		if err := s.add(systemTab(e), inputTab(e)); err != nil {
			return nil, err
		}
	}
	if err := s.add(conflictsTab(), receiptsTab(), authorityTab()); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Schema) add(specs ...TabSpec) error {
	for _, t := range specs {
		if _, dup := s.index[t.Name]; dup {
			return schemaErr("tab name %q declared twice", t.Name)
		}
		s.index[t.Name] = len(s.tabs)
		s.tabs = append(s.tabs, t)
	}
	return nil
}

// Tabs returns every tab spec in declaration order (entities first).
func (s *Schema) Tabs() []TabSpec { return append([]TabSpec(nil), s.tabs...) }

// Tab returns the spec of the logical tab name.
func (s *Schema) Tab(name string) (TabSpec, bool) {
	i, ok := s.index[name]
	if !ok {
		return TabSpec{}, false
	}
	return s.tabs[i], true
}

// WithTab returns a copy of s where the tab named spec.Name has the
// layout spec (an older layout of it, to read a tab not migrated yet).
// A name s does not declare is added.
func (s *Schema) WithTab(spec TabSpec) *Schema {
	out := &Schema{tabs: append([]TabSpec(nil), s.tabs...), index: maps.Clone(s.index)}
	if i, ok := out.index[spec.Name]; ok {
		out.tabs[i] = spec
		return out
	}
	out.index[spec.Name] = len(out.tabs)
	out.tabs = append(out.tabs, spec)
	return out
}

// TabNames returns the logical tab names, sorted.
func (s *Schema) TabNames() []string {
	out := make([]string, 0, len(s.tabs))
	for _, t := range s.tabs {
		out = append(out, t.Name)
	}
	sort.Strings(out)
	return out
}

// SystemTabName and InputTabName return an entity's tab names.
func SystemTabName(entity string) string { return entity + systemTabSuffix }

// InputTabName returns "<entity>_Input".
func InputTabName(entity string) string { return entity + inputTabSuffix }

func validateEntity(e Entity) error {
	if !namePattern.MatchString(e.Name) {
		return schemaErr("entity name %q", e.Name)
	}
	seen, keys := map[string]bool{}, 0
	for _, f := range e.Fields {
		if f.Name == "" || f.Name == AnchorHeader || seen[f.Name] || !f.Kind.Valid() {
			return schemaErr("entity %s: field %q", e.Name, f.Name)
		}
		seen[f.Name] = true
		if f.Key {
			keys++
		}
	}
	if keys == 0 {
		return schemaErr("entity %s has no key field", e.Name)
	}
	return nil
}
