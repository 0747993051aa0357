package projector

import (
	"encoding/json"
	"fmt"

	"zombiezen.com/go/sqlite"
)

// FieldRow is the canonical state of one field as stored in
// hk_entity_state.fields.
type FieldRow struct {
	Hash     string `json:"hash"`
	Revision uint64 `json:"rev"`
	Owner    Owner  `json:"owner"`
}

// EntityRow is what the read model knows of one entity's canonical state.
type EntityRow struct {
	Exists  bool
	Version uint64
	Fields  map[string]FieldRow
}

// EntityState reads one entity's canonical state through the writing
// connection (so it reflects every applied batch). A never-seen entity is
// the zero EntityRow with an empty Fields map.
func (p *Projector) EntityState(entity, id string) (EntityRow, error) {
	row := EntityRow{Fields: map[string]FieldRow{}}
	err := p.query("SELECT version, removed, fields FROM hk_entity_state WHERE entity = ? AND id = ?", func(st *sqlite.Stmt) error {
		row.Version, row.Exists = uint64(st.ColumnInt64(0)), st.ColumnInt64(1) == 0
		if err := json.Unmarshal([]byte(st.ColumnText(2)), &row.Fields); err != nil {
			return fmt.Errorf("%w: field state of %s %q: %w", ErrReadModelInvalid, entity, id, err)
		}
		return nil
	}, entity, id)
	return row, err
}

// putEntityState writes the entity's state row.
func (p *Projector) putEntityState(entity, id string, version, seq uint64, removed bool, fields map[string]FieldRow) error {
	js, err := json.Marshal(fields) // map keys sorted: deterministic
	if err != nil {
		return err
	}
	return p.exec(`INSERT INTO hk_entity_state (entity, id, version, removed, last_seq, fields) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (entity, id) DO UPDATE SET version = excluded.version, removed = excluded.removed,
  last_seq = excluded.last_seq, fields = excluded.fields`, entity, id, int64(version), removed, int64(seq), string(js))
}
