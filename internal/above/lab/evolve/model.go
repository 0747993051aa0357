package evolve

import (
	"fmt"
	"maps"
	"slices"

	"github.com/hikoutei/hikoutei-go/events"
)

// model is what the application was acknowledged, per entity: every live
// record with the values it last committed, and the values people typed
// into its cells (an accepted edit may replace a committed value). At
// each restart it is compared with the closed store and takes the
// store's values of the fields people changed (collapse), so the
// campaign can predict what the next shape change meets.
type model struct {
	recs  map[string]map[string]rec                        // entity → id → values
	typed map[string]map[string]map[string]map[string]bool // entity → id → field → texts people typed
	acked []string                                         // commit ids acknowledged
}

func newModel() *model {
	return &model{recs: map[string]map[string]rec{itemEntity: {}, otherEntity: {}},
		typed: map[string]map[string]map[string]map[string]bool{itemEntity: {}, otherEntity: {}}}
}

// ids are the live ids of entity, sorted (the workload draws from them).
func (m *model) ids(entity string) []string { return slices.Sorted(maps.Keys(m.recs[entity])) }

func (m *model) put(entity, id string, r rec) { m.recs[entity][id] = r.clone() }

func (m *model) remove(entity, id string) {
	delete(m.recs[entity], id)
	delete(m.typed[entity], id)
}

// typedBy notes a person's value typed into a field of a record.
func (m *model) typedBy(entity, id, field, text string) {
	byID := m.typed[entity]
	if byID[id] == nil {
		byID[id] = map[string]map[string]bool{}
	}
	if byID[id][field] == nil {
		byID[id][field] = map[string]bool{}
	}
	byID[id][field][text] = true
}

// lost compares what the store holds for entity (have) with the model:
// every live record is there with its committed values — or, for a
// field, a value a person typed into it — and no other record is. It
// returns one line per difference, then takes the store's values
// (collapse).
func (m *model) lost(entity string, have map[string]rec) []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(have)) {
		if _, ok := m.recs[entity][id]; !ok {
			out = append(out, fmt.Sprintf("%s %s is in the store but was removed (or never created)", entity, id))
		}
	}
	for _, id := range m.ids(entity) {
		want, got := m.recs[entity][id], have[id]
		if got == nil {
			out = append(out, fmt.Sprintf("acknowledged %s %s is missing from the store", entity, id))
			continue
		}
		for _, f := range slices.Sorted(maps.Keys(want)) {
			if !m.holds(entity, id, f, got[f]) {
				out = append(out, fmt.Sprintf("%s %s.%s is %#v, acknowledged %#v", entity, id, f, got[f], want[f]))
			}
		}
		for f := range got {
			if _, ok := want[f]; !ok {
				out = append(out, fmt.Sprintf("%s %s has field %s the model does not", entity, id, f))
			}
		}
	}
	m.recs[entity] = map[string]rec{}
	for id, r := range have {
		m.recs[entity][id] = r.clone()
	}
	return out
}

// holds: v is the field's committed value, or one a person typed.
func (m *model) holds(entity, id, f string, v any) bool {
	if v == m.recs[entity][id][f] {
		return true
	}
	text, _ := events.CanonicalText(v)
	return m.typed[entity][id][f][text]
}

// apply maps every record of entity through fn (a shape change), and the
// values people typed with their records.
func (m *model) apply(entity string, fn mapFn) {
	recs, typed := map[string]rec{}, map[string]map[string]map[string]bool{}
	for id, r := range m.recs[entity] {
		nid, nr := fn(id, r)
		recs[nid] = nr
		if t := m.typed[entity][id]; t != nil {
			typed[nid] = t
		}
	}
	m.recs[entity], m.typed[entity] = recs, typed
}

// renameTyped moves what people typed into field from to field to.
func (m *model) renameTyped(entity, from, to string) {
	for _, byField := range m.typed[entity] {
		if t, ok := byField[from]; ok {
			byField[to] = t
			delete(byField, from)
		}
	}
}
