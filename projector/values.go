package projector

import (
	"fmt"

	"zombiezen.com/go/sqlite"
)

// EntityValues reads one entity's row as canonical values by column name
// (the key column included); ok is false when the entity has no row.
// Errors: ErrInvalidSchema; ErrReadModelCorrupt (*CorruptRowError) when
// the row does not match its digest.
func (p *Projector) EntityValues(entity, id string) (map[string]any, bool, error) {
	t, known := p.tables[entity]
	if !known {
		return nil, false, fmt.Errorf("%w: entity %s is not in the schema", ErrInvalidSchema, entity)
	}
	sqlText, args, err := selectSQL(t, Query{Where: []Cond{{Field: t.PK, Value: id}}})
	if err != nil {
		return nil, false, err
	}
	var out map[string]any
	rr := newRowReader(t)
	err = p.query(sqlText, func(st *sqlite.Stmt) error {
		vals, err := rr.read(st)
		if err != nil {
			return err
		}
		out = map[string]any{t.PK: vals[0]}
		for i, c := range t.Fields {
			out[c.Name] = vals[i+1]
		}
		return nil
	}, args...)
	return out, out != nil, corruption(err)
}
