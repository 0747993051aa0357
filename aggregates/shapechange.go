package aggregates

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Shape changes: at Open, the application's declaration is compared with
// the last schema.declared of the log. CensusNeeds says what the engine
// must count in the read model (still in the old shapes) for the
// decision; ClassifyShapes then classifies every difference (additive,
// compatible, incompatible) and says which incompatible ones no migration
// maps. Both are pure.

// Renames are the earlier names a declaration gives its fields in the
// tag (`hikoutei:"title,was=name"`): entity → field (its new name; the
// primary key included) → the names it had before, in tag order. They are
// not part of the recorded shape: a was= naming a field the last
// declaration does not have is ignored.
type Renames map[string]map[string][]string

// CensusKey names what a census counted: the current records of an
// entity (Field "") or those of them whose value of Field (its name in
// the last declaration) does not convert to the new shape.
type CensusKey struct {
	Entity, Field string
}

// CensusNeed is one count the classification needs, with the shapes a
// value of the field converts between (zero for a count of records).
type CensusNeed struct {
	CensusKey
	From, To events.FieldShape
}

// CensusCount is what the engine counted for one CensusNeed: how many
// current records, and the first few of their keys in key order (keys
// are record ids, never field values).
type CensusCount struct {
	Records   int64
	FirstKeys []string
}

// CensusKeys is how many keys a CensusCount keeps.
const CensusKeys = 5

// Census holds the counts of CensusNeeds; a need without an entry counts
// nothing.
type Census map[CensusKey]CensusCount

// ShapeIncompatibility is one incompatible change: an entity removed
// while it has records, a key changed while it has records, or a retype
// some current values do not take. Records and FirstKeys say which
// records hold what does not convert.
type ShapeIncompatibility struct {
	Entity    string
	Field     string
	Change    events.ChangeKind
	From, To  string
	Records   int64
	FirstKeys []string
	// Migration names the migration ("<entity>/<version>") that maps it;
	// empty when none does (the change is refused).
	Migration string
}

// String describes the incompatibility for people: entity, field,
// change, records and keys, never a value.
func (s ShapeIncompatibility) String() string {
	what := s.Entity
	if s.Field != "" {
		what += "." + s.Field
	}
	change := string(s.Change)
	if s.From != "" && s.To != "" {
		change += " " + s.From + " → " + s.To
	}
	keys := strings.Join(s.FirstKeys, ", ")
	if int64(len(s.FirstKeys)) < s.Records {
		keys += ", …"
	}
	return fmt.Sprintf("%s: %s: %d record(s) (%s)", what, change, s.Records, keys)
}

// ShapeDecision is the classification of a declaration against the last
// one.
type ShapeDecision struct {
	// Changed lists every change, classified (Migrations is the engine's
	// to fill once the migrations ran).
	Changed events.SchemaChanged
	// Incompatible lists the incompatible changes, mapped or not.
	Incompatible []ShapeIncompatibility
	// Refused lists those no migration maps: the store must not open.
	Refused []ShapeIncompatibility
	// Fields maps, per entity of both declarations, each field of the
	// last declaration (the key included) to its name in the new one;
	// a dropped field is absent.
	Fields map[string]map[string]string
}

// CensusNeeds lists the counts ClassifyShapes needs for shapes against
// last: the current records of each entity removed or given another key,
// and, per retyped field, the records whose value does not convert.
func CensusNeeds(last events.SchemaDeclared, shapes []events.EntityShape, renames Renames) []CensusNeed {
	var out []CensusNeed
	for _, d := range diffEntities(last, shapes, renames) {
		switch {
		case d.removed || d.keyChanged:
			out = append(out, CensusNeed{CensusKey: CensusKey{Entity: d.name}})
		case d.added:
			continue
		}
		for _, f := range d.matched {
			if retyped(f.old, f.new) {
				out = append(out, CensusNeed{CensusKey: CensusKey{Entity: d.name, Field: f.old.Name}, From: f.old, To: f.new})
			}
		}
	}
	return out
}

// ClassifyShapes classifies every difference of shapes from last, with
// the census of CensusNeeds. migrations maps an entity to the name of the
// migration the application passed for it ("<entity>/<version>"), which
// maps its incompatible changes; every other incompatible change is
// Refused.
func ClassifyShapes(last events.SchemaDeclared, shapes []events.EntityShape, renames Renames, census Census, migrations map[string]string) ShapeDecision {
	dec := ShapeDecision{Fields: map[string]map[string]string{}}
	for _, d := range diffEntities(last, shapes, renames) {
		for _, ch := range d.changes(census) {
			if ch.Class == events.ClassIncompatible {
				ch.Migration = migrations[ch.Entity]
				dec.incompatible(ch, census)
			}
			dec.Changed.Changes = append(dec.Changed.Changes, ch)
		}
		if !d.added && !d.removed {
			dec.Fields[d.name] = d.fieldMap()
		}
	}
	return dec
}

// incompatible records an incompatible change with its census.
func (dec *ShapeDecision) incompatible(ch events.ShapeChange, census Census) {
	key := CensusKey{Entity: ch.Entity}
	if ch.Kind == events.ChangeFieldRetyped {
		key.Field = dec.oldName(ch)
	}
	c := census[key]
	inc := ShapeIncompatibility{Entity: ch.Entity, Field: ch.Field, Change: ch.Kind, From: ch.From, To: ch.To,
		Records: c.Records, FirstKeys: c.FirstKeys, Migration: ch.Migration}
	dec.Incompatible = append(dec.Incompatible, inc)
	if inc.Migration == "" {
		dec.Refused = append(dec.Refused, inc)
	}
}

// oldName is the last declaration's name of a retyped field (ch.Field is
// its new name): the retype's change carries it in From when renamed.
func (dec *ShapeDecision) oldName(ch events.ShapeChange) string {
	for _, prev := range dec.Changed.Changes {
		if prev.Entity == ch.Entity && prev.Kind == events.ChangeFieldRenamed && prev.To == ch.Field {
			return prev.From
		}
	}
	return ch.Field
}

// fieldPair is a field of the last declaration and its counterpart in the
// new one.
type fieldPair struct {
	old, new events.FieldShape
}

// entityDiff is how one entity's declaration differs.
type entityDiff struct {
	name           string
	added, removed bool
	oldPK, newPK   string
	keyRenamed     bool
	keyChanged     bool
	matched        []fieldPair         // in the new declaration's order
	newFields      []events.FieldShape // new fields, in the new order
	dropped        []events.FieldShape // in the last declaration's order
	reordered      bool
}

// diffEntities compares the declarations entity by entity: the new
// declaration's entities in order, then those it removed.
func diffEntities(last events.SchemaDeclared, shapes []events.EntityShape, renames Renames) []entityDiff {
	old := map[string]events.EntityShape{}
	for _, s := range last.Entities {
		old[s.Name] = s
	}
	var out []entityDiff
	declared := map[string]bool{}
	for _, s := range shapes {
		declared[s.Name] = true
		o, ok := old[s.Name]
		if !ok {
			out = append(out, entityDiff{name: s.Name, added: true, newPK: s.PK})
			continue
		}
		out = append(out, diffEntity(o, s, renames[s.Name]))
	}
	for _, s := range last.Entities {
		if !declared[s.Name] {
			out = append(out, entityDiff{name: s.Name, removed: true, oldPK: s.PK})
		}
	}
	return out
}

// diffEntity compares two declarations of one entity.
func diffEntity(o, s events.EntityShape, was map[string][]string) entityDiff {
	d := entityDiff{name: s.Name, oldPK: o.PK, newPK: s.PK}
	if o.PK != s.PK {
		_, stillField := s.Field(o.PK)
		d.keyRenamed = slices.Contains(was[s.PK], o.PK) && !stillField
		d.keyChanged = !d.keyRenamed
	}
	claimed := map[string]bool{}
	for _, f := range s.Fields {
		if of, ok := o.Field(f.Name); ok {
			d.matched, claimed[f.Name] = append(d.matched, fieldPair{of, f}), true
			continue
		}
		if of, ok := renamedFrom(o, s, f, was, claimed); ok {
			d.matched, claimed[of.Name] = append(d.matched, fieldPair{of, f}), true
			continue
		}
		d.newFields = append(d.newFields, f)
	}
	for _, f := range o.Fields {
		if !claimed[f.Name] {
			d.dropped = append(d.dropped, f)
		}
	}
	d.reordered = reordered(o, d.matched)
	return d
}

// renamedFrom is the field of o that f declares it was (the first of its
// was= names that o has, that the new shape does not declare itself and
// that no other field claimed).
func renamedFrom(o, s events.EntityShape, f events.FieldShape, was map[string][]string, claimed map[string]bool) (events.FieldShape, bool) {
	for _, w := range was[f.Name] {
		of, ok := o.Field(w)
		if _, kept := s.Field(w); ok && !kept && !claimed[w] {
			return of, true
		}
	}
	return events.FieldShape{}, false
}

// reordered reports whether the matched fields appear in another order
// than in o.
func reordered(o events.EntityShape, matched []fieldPair) bool {
	prev := -1
	for _, m := range matched {
		i := slices.IndexFunc(o.Fields, func(f events.FieldShape) bool { return f.Name == m.old.Name })
		if i < prev {
			return true
		}
		prev = i
	}
	return false
}

func retyped(a, b events.FieldShape) bool { return a.Kind != b.Kind || a.Nullable != b.Nullable }

// changes lists the diff's classified changes.
func (d entityDiff) changes(census Census) []events.ShapeChange {
	switch {
	case d.added:
		return []events.ShapeChange{{Entity: d.name, Kind: events.ChangeEntityAdded, Class: events.ClassAdditive}}
	case d.removed:
		return []events.ShapeChange{{Entity: d.name, Kind: events.ChangeEntityRemoved, Class: classByCount(census[CensusKey{Entity: d.name}])}}
	}
	out := d.keyChanges(census)
	for _, m := range d.matched {
		out = append(out, d.fieldChanges(m, census)...)
	}
	for _, f := range d.newFields {
		out = append(out, events.ShapeChange{Entity: d.name, Kind: events.ChangeFieldAdded, Field: f.Name, To: events.KindName(f), Class: events.ClassAdditive})
	}
	for _, f := range d.dropped {
		out = append(out, events.ShapeChange{Entity: d.name, Kind: events.ChangeFieldDropped, Field: f.Name, From: events.KindName(f), Class: events.ClassCompatible})
	}
	if d.reordered {
		out = append(out, events.ShapeChange{Entity: d.name, Kind: events.ChangeFieldsReordered, Class: events.ClassCompatible})
	}
	return out
}

// keyChanges is the change of the primary key, if any.
func (d entityDiff) keyChanges(census Census) []events.ShapeChange {
	switch {
	case d.keyRenamed:
		return []events.ShapeChange{{Entity: d.name, Kind: events.ChangeKeyRenamed, Field: d.newPK, From: d.oldPK, To: d.newPK, Class: events.ClassCompatible}}
	case d.keyChanged:
		return []events.ShapeChange{{Entity: d.name, Kind: events.ChangeKeyChanged, Field: d.newPK, From: d.oldPK, To: d.newPK,
			Class: classByCount(census[CensusKey{Entity: d.name}])}}
	}
	return nil
}

// fieldChanges are the changes of one field kept across the declarations.
func (d entityDiff) fieldChanges(m fieldPair, census Census) []events.ShapeChange {
	var out []events.ShapeChange
	if m.old.Name != m.new.Name {
		out = append(out, events.ShapeChange{Entity: d.name, Kind: events.ChangeFieldRenamed, Field: m.new.Name, From: m.old.Name, To: m.new.Name,
			Class: events.ClassCompatible})
	}
	if retyped(m.old, m.new) {
		out = append(out, events.ShapeChange{Entity: d.name, Kind: events.ChangeFieldRetyped, Field: m.new.Name, From: events.KindName(m.old),
			To: events.KindName(m.new), Class: classByCount(census[CensusKey{Entity: d.name, Field: m.old.Name}])})
	}
	if m.old.Owner != m.new.Owner {
		out = append(out, events.ShapeChange{Entity: d.name, Kind: events.ChangeOwnerChanged, Field: m.new.Name, From: string(m.old.Owner),
			To: string(m.new.Owner), Class: events.ClassCompatible})
	}
	return out
}

// classByCount: compatible when no record is concerned, else incompatible.
func classByCount(c CensusCount) events.ChangeClass {
	if c.Records > 0 {
		return events.ClassIncompatible
	}
	return events.ClassCompatible
}

// fieldMap maps the last declaration's field names (the key included) to
// the new ones; dropped fields are absent.
func (d entityDiff) fieldMap() map[string]string {
	m := map[string]string{}
	if !d.keyChanged {
		m[d.oldPK] = d.newPK
	}
	for _, f := range d.matched {
		m[f.old.Name] = f.new.Name
	}
	return m
}

// CensusCounter counts the census of a list of needs from the current
// records, fed one by one in key order (Add).
type CensusCounter struct {
	needs  []CensusNeed
	census Census
}

// NewCensusCounter starts the count of needs.
func NewCensusCounter(needs []CensusNeed) *CensusCounter {
	return &CensusCounter{needs: needs, census: Census{}}
}

// Entities lists the entities whose records the count needs.
func (c *CensusCounter) Entities() []string {
	var out []string
	for _, n := range c.needs {
		if !slices.Contains(out, n.Entity) {
			out = append(out, n.Entity)
		}
	}
	return out
}

// Add counts one current record of entity: its key and its values by the
// last declaration's field names. A required field without a value (the
// field was added after the record was written) has nothing to convert.
func (c *CensusCounter) Add(entity, key string, values map[string]any) {
	for _, n := range c.needs {
		if n.Entity != entity {
			continue
		}
		if n.Field != "" {
			v := values[n.Field]
			if v == nil && !n.From.Nullable {
				continue
			}
			if _, err := events.ConvertValue(v, n.From, n.To); err == nil {
				continue
			}
		}
		cc := c.census[n.CensusKey]
		cc.Records++
		if len(cc.FirstKeys) < CensusKeys {
			cc.FirstKeys = append(cc.FirstKeys, key)
		}
		c.census[n.CensusKey] = cc
	}
}

// Census is the count so far.
func (c *CensusCounter) Census() Census { return c.census }

// DecideRetiredConflicts ends the open conflicts of fields the new
// declaration dropped or no longer lets people edit (retired: entity →
// field names of the last declaration): each is resolved
// (ResolutionShapeChanged, by the application, at the revision it was
// opened at; the canonical value stands), its candidate cleared and its
// audit row updated, as any resolution. The changes belong in the unit
// that records the shape change.
func DecideRetiredConflicts(open []ConflictState, retired map[string]map[string]bool, sheet Sheet, now time.Time) Changes {
	var c Changes
	for _, cs := range open {
		if retired[cs.Entity][cs.Field] {
			c.Merge(resolve(cs, events.ResolutionShapeChanged, cs.CanonicalRevision, events.ActorApplication, sheet, now))
		}
	}
	return c
}

// RetiredFields lists, per entity of d, the fields of the last declaration
// people can no longer edit under the new one: dropped, or moved to the
// application.
func RetiredFields(last events.SchemaDeclared, d ShapeDecision) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, s := range last.Entities {
		for _, f := range s.Fields {
			if f.Owner != events.OwnerUser {
				continue
			}
			name, kept := d.Fields[s.Name][f.Name]
			if !kept || !d.userOwned(s.Name, name) {
				if out[s.Name] == nil {
					out[s.Name] = map[string]bool{}
				}
				out[s.Name][f.Name] = true
			}
		}
	}
	return out
}

// userOwned reports whether the new declaration lets people edit field.
func (d ShapeDecision) userOwned(entity, field string) bool {
	for _, ch := range d.Changed.Changes {
		if ch.Entity == entity && ch.Field == field && ch.Kind == events.ChangeOwnerChanged {
			return ch.To == string(events.OwnerUser)
		}
	}
	return true // unchanged owner: it was a user field
}
