package projector

import (
	"fmt"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// A full row is an upsert that binds every column (every create, and any
// persist that changes every field): its hk_digest depends on the bound
// values only, so the projector computes it in Go and binds it, instead of
// SQLite calling hk_row_digest back for every row. The digest is the one
// the SQL function computes from the same bound values (rowHasher); a
// value whose Go type does not match its column's kind plainly takes the
// SQL function's path.

// fullRow is a table's full-row upsert and digest tag.
type fullRow struct {
	sql string
	tag string
}

// fullRowOf returns t's full-row upsert (built once per table).
func (p *Projector) fullRowOf(t events.EntityShape) fullRow {
	if fr, ok := p.fullRows[t.Name]; ok {
		return fr
	}
	cols, marks, set := []string{fmt.Sprintf("%q", t.PK)}, []string{"?1"}, []string(nil)
	for i, f := range t.Fields {
		cols = append(cols, fmt.Sprintf("%q", f.Name))
		marks = append(marks, fmt.Sprintf("?%d", i+2))
		set = append(set, fmt.Sprintf("%q = excluded.%q", f.Name, f.Name))
	}
	cols = append(cols, fmt.Sprintf("%q", digestColumn))
	marks = append(marks, fmt.Sprintf("?%d", len(t.Fields)+2))
	set = append(set, fmt.Sprintf("%q = excluded.%q", digestColumn, digestColumn))
	fr := fullRow{tag: digestTag(t), sql: fmt.Sprintf("INSERT INTO %q (%s) VALUES (%s) ON CONFLICT (%q) DO UPDATE SET %s",
		t.Name, strings.Join(cols, ", "), strings.Join(marks, ", "), t.PK, strings.Join(set, ", "))}
	if p.fullRows == nil {
		p.fullRows = map[string]fullRow{}
	}
	p.fullRows[t.Name] = fr
	return fr
}

// writeFullRow upserts a row whose fields hold every column; ok = false
// (nothing written) when a column is missing from fields or a value's type
// is not its column kind's plain Go type.
func (p *Projector) writeFullRow(t events.EntityShape, id string, fields map[string]any) (bool, error) {
	fr := p.fullRowOf(t)
	p.digest.start(fr.tag)
	p.digest.text(id)
	for _, f := range t.Fields {
		v, ok := fields[f.Name]
		if !ok || !p.digest.value(f.Kind, v) {
			return false, nil
		}
	}
	st, err := p.conn.Prepare(fr.sql)
	if err != nil {
		return true, err
	}
	st.BindText(1, id)
	for i, f := range t.Fields {
		BindValue(st, i+2, fields[f.Name])
	}
	st.BindInt64(len(t.Fields)+2, p.digest.sum())
	return true, run(st)
}

// value hashes v as hk_row_digest hashes the value BindValue binds for it
// in a column of kind k; false when v is not k's plain Go type (or nil).
func (r *rowHasher) value(k events.Kind, v any) bool {
	if v == nil {
		r.null()
		return true
	}
	switch x := v.(type) {
	case string:
		return k == events.KindString && r.textOK(x)
	case int64:
		return k == events.KindInt && r.intOK(x)
	case float64:
		return k == events.KindFloat && r.floatOK(x)
	case bool:
		return k == events.KindBool && r.intOK(boolInt(x))
	case time.Time:
		return k == events.KindTime && r.textOK(x.UTC().Format(TimeLayout))
	}
	return false
}

func (r *rowHasher) textOK(s string) bool   { r.text(s); return true }
func (r *rowHasher) intOK(n int64) bool     { r.int(n); return true }
func (r *rowHasher) floatOK(f float64) bool { r.float(f); return true }

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
