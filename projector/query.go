package projector

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
)

// Query selects entities of one table: every Where condition holds, in
// Order (default: the primary key), paged by Limit and Offset.
type Query struct {
	Where  []Cond
	Order  []Order
	Limit  int // <= 0: no limit
	Offset int
}

// Cond keeps entities whose field equals Value, a canonical value of the
// field's kind (nil matches NULL).
type Cond struct {
	Field string
	Value any
}

// Order sorts by Field, descending when Desc.
type Order struct {
	Field string
	Desc  bool
}

// Select runs q against the table of t on conn and calls fn with each
// entity's canonical values: the primary key first, then the fields in
// declaration order. Each row's digest is checked before fn sees it.
// Errors: ErrUnknownField; ErrReadModelCorrupt (*CorruptRowError, or
// SQLite's own corruption report); SQLite errors.
func Select(conn *sqlite.Conn, t events.EntityShape, q Query, fn func(vals []any) error) error {
	sqlText, args, err := selectSQL(t, q)
	if err != nil {
		return err
	}
	stmt, err := conn.Prepare(sqlText)
	if err != nil {
		return corruption(err)
	}
	defer stmt.Reset()
	defer stmt.ClearBindings()
	bindAll(stmt, args...)
	rr := newRowReader(t)
	for {
		ok, err := stmt.Step()
		if err != nil || !ok {
			return corruption(err)
		}
		vals, err := rr.read(stmt)
		if err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
}

func fieldKinds(t events.EntityShape) []events.Kind {
	out := make([]events.Kind, len(t.Fields))
	for i, f := range t.Fields {
		out[i] = f.Kind
	}
	return out
}

func hasColumn(t events.EntityShape, name string) bool {
	_, ok := t.Field(name)
	return ok || name == t.PK
}

func selectSQL(t events.EntityShape, q Query) (string, []any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %q", t.PK)
	for _, f := range t.Fields {
		fmt.Fprintf(&b, ", %q", f.Name)
	}
	fmt.Fprintf(&b, ", %q FROM %q", DigestColumn, t.Name)
	var args []any
	for i, c := range q.Where {
		if !hasColumn(t, c.Field) {
			return "", nil, fmt.Errorf("%w: %s.%s", ErrUnknownField, t.Name, c.Field)
		}
		b.WriteString(map[bool]string{true: " WHERE ", false: " AND "}[i == 0])
		if c.Value == nil {
			fmt.Fprintf(&b, "%q IS NULL", c.Field)
			continue
		}
		fmt.Fprintf(&b, "%q = ?", c.Field)
		args = append(args, c.Value)
	}
	order := q.Order
	if len(order) == 0 {
		order = []Order{{Field: t.PK}}
	}
	for i, o := range order {
		if !hasColumn(t, o.Field) {
			return "", nil, fmt.Errorf("%w: %s.%s", ErrUnknownField, t.Name, o.Field)
		}
		b.WriteString(map[bool]string{true: " ORDER BY ", false: ", "}[i == 0])
		fmt.Fprintf(&b, "%q %s", o.Field, map[bool]string{true: "DESC", false: "ASC"}[o.Desc])
	}
	if q.Limit > 0 || q.Offset > 0 {
		limit := q.Limit
		if limit <= 0 {
			limit = -1 // SQLite: no limit
		}
		fmt.Fprintf(&b, " LIMIT %d OFFSET %d", limit, max(q.Offset, 0))
	}
	return b.String(), args, nil
}
