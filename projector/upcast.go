package projector

import (
	"math"
	"slices"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Reading old events in the newest shapes (upcasting at read time): an
// event recorded under an older declaration of its entity names fields
// as they were then and holds values of their kinds then. The upcaster
// maps each field to its newest name (events.ShapeHistory.FieldName:
// renames followed, dropped fields left out) and each value to its
// newest kind (events.ConvertValue from the field's shape when the event
// was recorded). A value that does not convert — only possible before the
// migration that rewrote it — is left out of the row: its column is NULL
// and its canonical hash unknown (""), its revision kept.

// notConverted stands for a value that did not convert to its field's
// newest kind: BindValue binds NULL, its hash is "".
type notConverted struct{}

// fieldMapping is where one field of an era goes in the newest shapes.
type fieldMapping struct {
	name     string // the newest name
	kept     bool   // false: dropped (or its entity removed) since
	convert  bool   // the kind or nullability changed since
	from, to events.FieldShape
}

// eraMapping is the mapping of one entity's fields in one era.
type eraMapping struct {
	identity bool
	fields   map[string]fieldMapping // the era's declared fields by name
	// zeros are the newest fields a record created in the era lacks,
	// with their zero values (see upcaster.zeros).
	zeros map[string]any
}

// upcaster maps the events of older eras into the newest shapes.
type upcaster struct {
	hist    events.ShapeHistory
	targets map[string]events.EntityShape
	// from[entity] is the first sequence from which the entity's events
	// need no mapping (absent: none does).
	from map[string]uint64
	// eras[entity][k]: the mapping of slot k (0: before the first
	// declaration; k: during hist[k-1]).
	eras map[string][]eraMapping
	tabs map[string]string // Input tab → entity
}

// newUpcaster returns nil when no event of hist needs mapping into
// targets (the common case: one shape, or changes that kept every name
// and kind).
func newUpcaster(hist events.ShapeHistory, targets []events.EntityShape, tabs map[string]string) *upcaster {
	if len(hist) == 0 {
		return nil
	}
	u := &upcaster{hist: hist, targets: map[string]events.EntityShape{}, from: map[string]uint64{}, eras: map[string][]eraMapping{}, tabs: tabs}
	for _, t := range targets {
		u.targets[t.Name] = t
	}
	for _, name := range u.entityNames() {
		slots := u.slots(name)
		first := len(slots)
		for first > 0 && slots[first-1].identity {
			first--
		}
		if first == 0 {
			continue
		}
		u.eras[name] = slots
		u.from[name] = math.MaxUint64 // the newest declaration is not the target (a replay with other shapes)
		if first < len(slots) {
			u.from[name] = u.slotSeq(first)
		}
	}
	if len(u.from) == 0 {
		return nil
	}
	return u
}

// entityNames lists every entity any era or target declares.
func (u *upcaster) entityNames() []string {
	var out []string
	add := func(n string) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, era := range u.hist {
		for _, s := range era.Declared.Entities {
			add(s.Name)
		}
	}
	for n := range u.targets {
		add(n)
	}
	return out
}

// slotSeq is the first sequence of slot k.
func (u *upcaster) slotSeq(k int) uint64 {
	if k == 0 {
		return 0
	}
	return u.hist[k-1].Seq
}

// slots computes an entity's mapping in every slot.
func (u *upcaster) slots(entity string) []eraMapping {
	out := make([]eraMapping, len(u.hist)+1)
	for k := range out {
		out[k] = u.slot(entity, k)
	}
	return out
}

// slot computes an entity's mapping in slot k: identity when no later
// change renames, drops or removes anything of it and its fields' kinds
// then are the newest.
func (u *upcaster) slot(entity string, k int) eraMapping {
	m := eraMapping{identity: !u.renamedAfter(entity, k), fields: map[string]fieldMapping{}}
	var shape events.EntityShape
	if k > 0 {
		shape, _ = u.hist.Shape(entity, u.hist[k-1].Seq)
	}
	for _, f := range shape.Fields {
		fm := u.mapField(entity, f.Name, u.slotSeq(k))
		if to, ok := u.targets[entity].Field(fm.name); ok && fm.kept && (f.Kind != to.Kind || f.Nullable != to.Nullable) {
			fm.convert, fm.from, fm.to = true, f, to
		}
		m.identity = m.identity && fm.kept && fm.name == f.Name && !fm.convert
		m.fields[f.Name] = fm
	}
	m.zeros = u.zeros(entity, k, m)
	m.identity = m.identity && len(m.zeros) == 0
	return m
}

// zeros are the newest fields of entity a record created in slot k does
// not have: fields a later recorded change added (field_added), not
// nullable. Such a record reads the field's zero value until it is
// written; its row holds that value too — so a query by it finds the
// record and the sheet shows it — filled in when the record's creation is
// read. (A log that added fields before changes were recorded keeps its
// NULLs: its read models were built that way.)
func (u *upcaster) zeros(entity string, k int, m eraMapping) map[string]any {
	if k == 0 {
		return nil
	}
	covered := map[string]bool{}
	for _, fm := range m.fields {
		covered[fm.name] = covered[fm.name] || fm.kept
	}
	target := u.targets[entity]
	var out map[string]any
	for _, era := range u.hist[k:] {
		if era.Changed == nil {
			continue
		}
		for _, ch := range era.Changed.Changes {
			if ch.Entity != entity || ch.Kind != events.ChangeFieldAdded {
				continue
			}
			name, ok := u.hist.FieldName(entity, ch.Field, era.Seq)
			f, declared := target.Field(name)
			if !ok || !declared || f.Nullable || covered[name] || name == target.PK {
				continue
			}
			if out == nil {
				out = map[string]any{}
			}
			out[name] = zeroValue(f.Kind)
		}
	}
	return out
}

// zeroValue is the canonical zero value of a required field of kind k.
func zeroValue(k events.Kind) any {
	switch k {
	case events.KindInt:
		return int64(0)
	case events.KindFloat:
		return float64(0)
	case events.KindBool:
		return false
	case events.KindTime:
		return time.Time{}.UTC()
	}
	return ""
}

// renamedAfter reports whether a change recorded after slot k renames,
// drops or removes anything of entity.
func (u *upcaster) renamedAfter(entity string, k int) bool {
	for _, era := range u.hist[k:] {
		if era.Changed == nil {
			continue
		}
		for _, ch := range era.Changed.Changes {
			if ch.Entity != entity {
				continue
			}
			switch ch.Kind {
			case events.ChangeEntityRemoved, events.ChangeFieldDropped, events.ChangeFieldRenamed:
				return true
			}
		}
	}
	return false
}

func (u *upcaster) mapField(entity, field string, seq uint64) fieldMapping {
	name, ok := u.hist.FieldName(entity, field, seq)
	return fieldMapping{name: name, kept: ok}
}

// needed reports whether an event of entity at seq needs mapping.
func (u *upcaster) needed(entity string, seq uint64) bool {
	if u == nil {
		return false
	}
	from, ok := u.from[entity]
	return ok && seq < from
}

// slotOf is the mapping of entity's fields for an event at seq.
func (u *upcaster) slotOf(entity string, seq uint64) eraMapping {
	k, _ := slices.BinarySearchFunc(u.hist, seq+1, func(e events.ShapeEra, s uint64) int {
		if e.Seq < s {
			return -1
		}
		return 1
	})
	return u.eras[entity][k]
}

// field maps one field of entity named by an event at seq.
func (u *upcaster) field(entity, field string, seq uint64) fieldMapping {
	return u.inSlot(u.slotOf(entity, seq), entity, field, seq)
}

// inSlot maps a field with its era's mapping m.
func (u *upcaster) inSlot(m eraMapping, entity, field string, seq uint64) fieldMapping {
	if fm, ok := m.fields[field]; ok {
		return fm
	}
	return u.mapField(entity, field, seq) // a field the era did not declare: names only
}

// name maps a field name only (kept: the field still exists).
func (u *upcaster) name(entity, field string, seq uint64) (string, bool) {
	if !u.needed(entity, seq) {
		return field, true
	}
	fm := u.field(entity, field, seq)
	return fm.name, fm.kept
}

// value maps a value of field (as fm maps it) to its newest kind.
func (fm fieldMapping) value(v any) any {
	if !fm.convert {
		return v
	}
	out, err := events.ConvertValue(v, fm.from, fm.to)
	if err != nil {
		return notConverted{}
	}
	return out
}

// persisted maps an entity.persisted of seq into the newest shapes.
func (u *upcaster) persisted(seq uint64, x events.EntityPersisted) events.EntityPersisted {
	if !u.needed(x.Entity, seq) {
		return x
	}
	fields, revs := make(map[string]any, len(x.Fields)), make(map[string]uint64, len(x.Revisions))
	m := u.slotOf(x.Entity, seq)
	for name, v := range x.Fields {
		fm := u.inSlot(m, x.Entity, name, seq)
		if !fm.kept {
			continue
		}
		fields[fm.name] = fm.value(v)
		if r, ok := x.Revisions[name]; ok {
			revs[fm.name] = r
		}
	}
	if x.Created {
		for name, z := range m.zeros {
			if _, ok := fields[name]; !ok {
				fields[name] = z
			}
		}
	}
	x.Fields, x.Revisions = fields, revs
	return x
}

// names maps the keys of a map of field names (dropped fields left out).
func upcastKeys[V any](u *upcaster, entity string, seq uint64, m map[string]V) map[string]V {
	if !u.needed(entity, seq) {
		return m
	}
	out := make(map[string]V, len(m))
	for name, v := range m {
		if n, ok := u.name(entity, name, seq); ok {
			out[n] = v
		}
	}
	return out
}

// tabEntity is the entity an Input tab shows ("" when unknown).
func (u *upcaster) tabEntity(tab string) string {
	if u == nil {
		return ""
	}
	return u.tabs[tab]
}
