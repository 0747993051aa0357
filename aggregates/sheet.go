package aggregates

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Sheet is what decisions need to know of the spreadsheet's layout: which
// tabs show an entity, their columns, how rows are addressed and what the
// Sync_Conflicts audit rows hold. The engine implements it over
// sheetsio/layout; every method is a pure function of its arguments.
type Sheet interface {
	// Target is the row of tab that shows anchor.
	Target(tab, anchor string) Target
	// RowTabs lists the tabs that show an entity's rows: its System tab
	// and, when people may edit some of its fields, its Input tab.
	RowTabs(entity string) []RowTab
	// AnchorColumn is the Input tabs' anchor column (the physical row id).
	AnchorColumn() string
	// ConflictsTab is the shared Sync_Conflicts tab.
	ConflictsTab() string
	// AuditOpened is the Sync_Conflicts row of a conflict just opened.
	AuditOpened(c events.ConflictOpened, at time.Time) map[string]any
	// AuditResolved is the update of a conflict's row once resolved: how
	// and by whom.
	AuditResolved(how events.Resolution, actor events.Actor, at time.Time) map[string]any
	// ChoiceRejected is the update of a conflict's row whose resolution
	// chosen in the sheet was not applied: the reason, and the choice
	// cleared when clear (so the person chooses again).
	ChoiceRejected(reason string, clear bool) map[string]any
	// AuditValues is the update of an open conflict's row to the values
	// it has now (as Render shows them).
	AuditValues(systemValue, sheetValue string) map[string]any
	// AuditRefreshed is the update of an open conflict's row after the
	// person typed again in the cell: the new sheet value, any choice
	// cleared, and why.
	AuditRefreshed(sheetValue string) map[string]any
	// ShowsMarkerOf reports whether observed, a cell of column field of
	// tab, is the marker the sheet shows in place of canonical because
	// Google Sheets cannot hold canonical (a text over 50,000 characters,
	// …): such a cell shows canonical state as well as the sheet can and
	// is never a person's edit.
	ShowsMarkerOf(tab, field string, observed, canonical any) bool
}

// RowTab is one tab that shows an entity's rows.
type RowTab struct {
	Tab   string
	Input bool // people edit its user-owned cells
	// Columns are the data columns in order: the key first, the anchor
	// column left out.
	Columns []string
}

// ShownHash is the hash comparisons of sheet cells use: the canonical
// hash with "" folded into nil (a sheet cannot tell an empty text from a
// blank cell).
func ShownHash(v any) (string, error) {
	if s, ok := v.(string); ok && s == "" {
		v = nil
	}
	h, err := events.Hash(v)
	if err != nil {
		return "", fmt.Errorf("shown hash: %w", err)
	}
	return h, nil
}

// Render is the audit text of a canonical value.
func Render(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprint(v)
}

// RowEffects maps one entity change (entity.persisted or entity.removed)
// to the effects that show it on each of its tabs: the whole row when it
// was created, the changed columns when updated (nothing when none of the
// tab's columns changed), a delete when removed. key is the entity's
// primary key field; the key and anchor never change.
func RowEffects(sheet Sheet, entity, id, key string, change events.Payload) []Queue {
	p, persisted := change.(events.EntityPersisted)
	var out []Queue
	for _, tab := range sheet.RowTabs(entity) {
		q := Queue{Target: sheet.Target(tab.Tab, id), Entity: entity, ID: id}
		switch {
		case !persisted:
			q.Op = events.OpDelete
		case p.Created:
			q.Op, q.Values = events.OpAppend, rowValues(tab.Columns, key, id, p.Fields, true)
		default:
			q.Op, q.Values = events.OpUpdate, rowValues(tab.Columns, key, id, p.Fields, false)
			if len(q.Values) == 0 {
				continue
			}
		}
		out = append(out, q)
	}
	return out
}

// rowValues picks a tab's columns: all of them for a new row, the changed
// ones for an update.
func rowValues(columns []string, key, id string, fields map[string]any, created bool) map[string]any {
	out := map[string]any{}
	for _, col := range columns {
		switch {
		case col == key:
			if created {
				out[col] = id
			}
		case created:
			out[col] = fields[col]
		default:
			if v, ok := fields[col]; ok {
				out[col] = v
			}
		}
	}
	return out
}

// ReferPersisted makes each effect of qs whose values are exactly the
// fields of p (the entity.persisted at version of its stream, in the same
// commit), plus the key column holding the id on a new row, refer to p
// instead of repeating the values in the log (EffectQueued.ValuesOf).
func ReferPersisted(qs []Queue, p events.Payload, key string, version uint64) {
	pp, ok := p.(events.EntityPersisted)
	if !ok {
		return
	}
	for i := range qs {
		q := &qs[i]
		if q.ExpectedHash != "" || q.Entity != pp.Entity || q.ID != pp.ID || q.Values == nil {
			continue
		}
		keyed := q.Op == events.OpAppend
		if sameValues(q.Values, pp.Fields, key, q.ID, keyed) {
			q.ValuesOf = version
			if keyed {
				q.KeyColumn = key
			}
		}
	}
}

// sameValues reports whether values are fields, plus key → id when keyed.
func sameValues(values, fields map[string]any, key, id string, keyed bool) bool {
	n := len(fields)
	if keyed {
		if _, dup := fields[key]; dup || values[key] != any(id) {
			return false
		}
		n++
	}
	if len(values) != n {
		return false
	}
	for k, v := range fields {
		w, ok := values[k]
		if !ok || !sameValue(v, w) {
			return false
		}
	}
	return true
}

// sameValue compares two canonical values (scalars by ==, others deeply).
func sameValue(a, b any) bool {
	switch a.(type) {
	case nil, string, bool, int64, float64:
		return a == b
	}
	return reflect.DeepEqual(a, b)
}
