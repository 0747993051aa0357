package projector

import (
	"fmt"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
)

// EntityValues reads one entity's row as canonical values by column name
// (the key column included); ok is false when the entity has no row.
func (p *Projector) EntityValues(entity, id string) (map[string]any, bool, error) {
	t, known := p.tables[entity]
	if !known {
		return nil, false, fmt.Errorf("%w: entity %s is not in the schema", ErrInvalidSchema, entity)
	}
	cols := []string{fmt.Sprintf("%q", t.PK)}
	for _, c := range t.Fields {
		cols = append(cols, fmt.Sprintf("%q", c.Name))
	}
	var out map[string]any
	err := p.query(fmt.Sprintf("SELECT %s FROM %q WHERE %q = ?", strings.Join(cols, ", "), t.Name, t.PK), func(st *sqlite.Stmt) error {
		out = map[string]any{t.PK: st.ColumnText(0)}
		for i, c := range t.Fields {
			v, err := columnValue(st, i+1, c.Kind)
			if err != nil {
				return err
			}
			out[c.Name] = v
		}
		return nil
	}, id)
	return out, out != nil, err
}

// columnValue converts a stored column back to its canonical value.
func columnValue(st *sqlite.Stmt, i int, k events.Kind) (any, error) {
	if st.ColumnType(i) == sqlite.TypeNull {
		return nil, nil
	}
	switch k {
	case events.KindInt:
		return st.ColumnInt64(i), nil
	case events.KindFloat:
		return st.ColumnFloat(i), nil
	case events.KindBool:
		return st.ColumnInt64(i) != 0, nil
	case events.KindTime:
		return time.Parse(TimeLayout, st.ColumnText(i))
	}
	return st.ColumnText(i), nil
}
