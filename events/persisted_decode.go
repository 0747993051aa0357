package events

import "strings"

// persistedSchema is the schema of entity.persisted this build writes.
const persistedSchema = 3

// decodePersistedFast types a current-schema entity.persisted record's
// payload map m without reflection or the intermediate maps the general
// path builds (fromEnvelope's derived keys, expandPersisted's revisions):
// every replayed persist decodes one, so a rebuild spends much of its
// decoding here. It returns false, and the caller takes the general path
// (decodeTyped, which reports the error), for anything but a well-formed
// payload; for a well-formed one it gives exactly what the general path
// gives (TestDecodePersistedFastMatchesGeneral).
func decodePersistedFast(stream string, version uint64, m map[string]any) (EntityPersisted, bool) {
	var p EntityPersisted
	created, revs := false, false
	for k, raw := range m {
		ok := true
		switch k {
		case "entity":
			p.Entity, ok = raw.(string)
		case "id":
			p.ID, ok = raw.(string)
		case "created":
			created = true
			p.Created, ok = optBool(raw)
		case "fields":
			p.Fields, ok = optMap(raw)
		case "revisions":
			revs = true
			p.Revisions, ok = optRevisions(raw)
		case "actor":
			var s string
			s, ok = raw.(string)
			p.Actor = Actor(s)
		default:
			ok = false
		}
		if !ok {
			return p, false
		}
	}
	return p, fillPersisted(&p, stream, version, m, created, revs)
}

// fillPersisted fills in what the record left out, as fromEnvelope and
// expandPersisted do, and checks the required keys.
func fillPersisted(p *EntityPersisted, stream string, version uint64, m map[string]any, created, revs bool) bool {
	if !created {
		p.Created = version == 1
	}
	_, hasE := m["entity"]
	_, hasI := m["id"]
	if !hasE && !hasI {
		rest, ok := strings.CutPrefix(stream, "entity/")
		entity, id, ok2 := strings.Cut(rest, "/")
		if !ok || !ok2 {
			return false
		}
		p.Entity, p.ID = entity, id
	}
	if !revs && len(p.Fields) > 0 {
		p.Revisions = make(map[string]uint64, len(p.Fields))
		for k := range p.Fields {
			p.Revisions[k] = 1
		}
	}
	return p.Entity != "" && p.ID != ""
}

func optBool(raw any) (bool, bool) {
	if raw == nil {
		return false, true
	}
	b, ok := raw.(bool)
	return b, ok
}

func optMap(raw any) (map[string]any, bool) {
	if raw == nil {
		return nil, true
	}
	m, ok := raw.(map[string]any)
	return m, ok
}

func optRevisions(raw any) (map[string]uint64, bool) {
	if raw == nil {
		return nil, true
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]uint64, len(m))
	for k, e := range m {
		n, ok := e.(int64)
		if !ok || n < 0 {
			return nil, false
		}
		out[k] = uint64(n)
	}
	return out, true
}
