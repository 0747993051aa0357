package projector

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// FieldRow is the canonical state of one field as stored in
// hk_entity_state.fields.
type FieldRow struct {
	Hash     string       `json:"hash"`
	Revision uint64       `json:"rev"`
	Owner    events.Owner `json:"owner"`
}

// entityRow is what the read model stores of one entity's canonical state.
type entityRow struct {
	Exists  bool
	Version uint64
	Fields  map[string]FieldRow
}

// EntityState reads one entity's canonical state through the writing
// connection (so it reflects every applied batch). A never-seen entity is
// the zero state with an empty Fields map.
func (p *Projector) EntityState(entity, id string) (aggregates.EntityState, error) {
	row, err := p.entityRow(entity, id)
	return row.state(), err
}

// state is the decisions' view of a stored row.
func (row entityRow) state() aggregates.EntityState {
	st := aggregates.EntityState{Exists: row.Exists, Version: row.Version, Fields: make(map[string]aggregates.FieldState, len(row.Fields))}
	for name, f := range row.Fields {
		st.Fields[name] = aggregates.FieldState{Hash: f.Hash, Revision: f.Revision}
	}
	return st
}

func (p *Projector) entityRow(entity, id string) (entityRow, error) {
	return entityRowOn(p.conn, entity, id)
}

// EntityStatesOn reads the canonical state of entity's ids on conn (any
// connection to a read model, e.g. one opened read-only while the store
// is closed); a never-seen id has the zero state.
func EntityStatesOn(conn *sqlite.Conn, entity string, ids []string) (map[string]aggregates.EntityState, error) {
	out := make(map[string]aggregates.EntityState, len(ids))
	for _, id := range ids {
		row, err := entityRowOn(conn, entity, id)
		if err != nil {
			return nil, err
		}
		out[id] = row.state()
	}
	return out, nil
}

func entityRowOn(conn *sqlite.Conn, entity, id string) (entityRow, error) {
	row := entityRow{Fields: map[string]FieldRow{}}
	err := queryConn(conn, "SELECT version, removed, fields FROM hk_entity_state WHERE entity = ? AND id = ?", func(st *sqlite.Stmt) error {
		row.Version, row.Exists = uint64(st.ColumnInt64(0)), st.ColumnInt64(1) == 0
		if err := json.Unmarshal([]byte(st.ColumnText(2)), &row.Fields); err != nil {
			return fmt.Errorf("%w: field state of %s %q: %w", ErrReadModelInvalid, entity, id, err)
		}
		return nil
	}, entity, id)
	return row, err
}

const putEntityStateSQL = `INSERT INTO hk_entity_state (entity, id, version, removed, last_seq, fields) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (entity, id) DO UPDATE SET version = excluded.version, removed = excluded.removed,
  last_seq = excluded.last_seq, fields = excluded.fields`

// putEntityState writes the entity's state row.
// fields are sorted by name.
func (p *Projector) putEntityState(entity, id string, version, seq uint64, removed bool, fields []fieldEntry) error {
	st, err := p.conn.Prepare(putEntityStateSQL)
	if err != nil {
		return err
	}
	p.jsonBuf = appendFieldEntries(p.jsonBuf[:0], fields)
	st.BindText(1, entity)
	st.BindText(2, id)
	st.BindInt64(3, int64(version))
	st.BindBool(4, removed)
	st.BindInt64(5, int64(seq))
	st.BindText(6, unsafe.String(unsafe.SliceData(p.jsonBuf), len(p.jsonBuf))) // BindText copies it before returning
	return run(st)
}

// appendFieldState appends the hk_entity_state.fields JSON of fields to dst:
// byte for byte what encoding/json.Marshal gives for the map (keys sorted
// by bytes, {"hash":…,"rev":…,"owner":…}), without its reflection.
func appendFieldState(dst []byte, fields map[string]FieldRow) []byte {
	return appendFieldEntries(dst, entriesOf(fields))
}

// fieldEntry is one field's state, for building the JSON in name order.
type fieldEntry struct {
	name string
	row  FieldRow
}

// entriesOf returns the fields sorted by name.
func entriesOf(fields map[string]FieldRow) []fieldEntry {
	out := make([]fieldEntry, 0, len(fields))
	for name, f := range fields {
		out = append(out, fieldEntry{name, f})
	}
	sortEntries(out)
	return out
}

// declaredName is a declared field's name and owner.
type declaredName struct {
	name  string
	owner events.Owner
}

// sortedDeclared returns t's fields sorted as sortEntries sorts, with the
// owner owner(entity, field) gives each.
func sortedDeclared(t events.EntityShape, owner func(entity, field string) events.Owner) []declaredName {
	out := make([]declaredName, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = declaredName{f.Name, owner(t.Name, f.Name)}
	}
	slices.SortFunc(out, func(a, b declaredName) int { return strings.Compare(a.name, b.name) })
	return out
}

// sortEntries sorts by name, as encoding/json sorts map keys (by bytes).
func sortEntries(es []fieldEntry) {
	slices.SortFunc(es, func(a, b fieldEntry) int { return strings.Compare(a.name, b.name) })
}

// appendFieldEntries appends the JSON object of fields (sorted by name).
func appendFieldEntries(dst []byte, fields []fieldEntry) []byte {
	dst = append(dst, '{')
	for i, fe := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		f := fe.row
		dst = appendJSONString(dst, fe.name)
		dst = append(dst, `:{"hash":`...)
		dst = appendJSONString(dst, f.Hash)
		dst = append(dst, `,"rev":`...)
		dst = strconv.AppendUint(dst, f.Revision, 10)
		dst = append(dst, `,"owner":`...)
		dst = appendJSONString(dst, string(f.Owner))
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendJSONString appends s as encoding/json quotes it: plain printable
// ASCII directly, anything else (escapes, HTML characters, non-ASCII)
// through encoding/json itself.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			js, _ := json.Marshal(s) // a string always marshals
			return append(dst, js...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
