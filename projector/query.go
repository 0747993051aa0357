package projector

import (
	"fmt"
	"strings"
	"unicode/utf8"

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

// Cond keeps entities whose field compares to Value by Op, Value being a
// canonical value of the field's kind. With OpEq (the zero Op), nil
// matches NULL; OpIn matches any of Values (none: nothing); OpPrefix
// matches text that starts with Value, byte for byte (case-sensitive, no
// wildcards). Values are always bound as parameters, never spliced into
// the SQL text.
type Cond struct {
	Field  string
	Op     Op
	Value  any
	Values []any // OpIn
}

// Op is a filter's comparison.
type Op string

// Filter comparisons. Strings compare byte-wise (BINARY collation: the
// order of Go's string comparison), times by instant, booleans as 0 < 1.
const (
	OpEq     Op = ""
	OpLt     Op = "<"
	OpLe     Op = "<="
	OpGt     Op = ">"
	OpGe     Op = ">="
	OpIn     Op = "IN"
	OpPrefix Op = "PREFIX"
)

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

// selectColumns writes the SELECT of t's rows as a rowReader reads them:
// the key, the fields, the digest.
func selectColumns(b *strings.Builder, t events.EntityShape) {
	fmt.Fprintf(b, "SELECT %q", t.PK)
	for _, f := range t.Fields {
		fmt.Fprintf(b, ", %q", f.Name)
	}
	fmt.Fprintf(b, ", %q FROM %q", digestColumn, t.Name)
}

func hasColumn(t events.EntityShape, name string) bool {
	_, ok := t.Field(name)
	return ok || name == t.PK
}

func selectSQL(t events.EntityShape, q Query) (string, []any, error) {
	var b strings.Builder
	selectColumns(&b, t)
	args, err := whereSQL(&b, t, q.Where)
	if err != nil {
		return "", nil, err
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

// Count returns how many entities of t's table match q.Where (q's order
// and paging are ignored). Errors: ErrUnknownField; SQLite errors.
func Count(conn *sqlite.Conn, t events.EntityShape, q Query) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT count(*) FROM %q", t.Name)
	args, err := whereSQL(&b, t, q.Where)
	if err != nil {
		return 0, err
	}
	stmt, err := conn.Prepare(b.String())
	if err != nil {
		return 0, corruption(err)
	}
	defer stmt.Reset()
	defer stmt.ClearBindings()
	bindAll(stmt, args...)
	if _, err := stmt.Step(); err != nil {
		return 0, corruption(err)
	}
	return stmt.ColumnInt64(0), nil
}

// whereSQL appends the WHERE clause of conds to b and returns its
// parameters, in order.
func whereSQL(b *strings.Builder, t events.EntityShape, conds []Cond) ([]any, error) {
	var args []any
	for i, c := range conds {
		if !hasColumn(t, c.Field) {
			return nil, fmt.Errorf("%w: %s.%s", ErrUnknownField, t.Name, c.Field)
		}
		b.WriteString(map[bool]string{true: " WHERE ", false: " AND "}[i == 0])
		a, err := condSQL(b, c)
		if err != nil {
			return nil, err
		}
		args = append(args, a...)
	}
	return args, nil
}

// condSQL writes one condition with ? placeholders and returns what they
// bind. A prefix compares the first characters of the column with the
// prefix (substr/length count characters), so no value is ever read as
// a pattern: a '%', '_', '*' or quote in it is itself; the lower bound
// lets SQLite start an index scan at the prefix.
func condSQL(b *strings.Builder, c Cond) ([]any, error) {
	switch c.Op {
	case OpEq:
		if c.Value == nil {
			fmt.Fprintf(b, "%q IS NULL", c.Field)
			return nil, nil
		}
		fmt.Fprintf(b, "%q = ?", c.Field)
	case OpLt, OpLe, OpGt, OpGe:
		fmt.Fprintf(b, "%q %s ?", c.Field, c.Op)
	case OpIn:
		if len(c.Values) == 0 {
			b.WriteString("0")
			return nil, nil
		}
		fmt.Fprintf(b, "%q IN (?%s)", c.Field, strings.Repeat(", ?", len(c.Values)-1))
		return c.Values, nil
	case OpPrefix:
		p, ok := c.Value.(string)
		if !ok {
			return nil, fmt.Errorf("%w: a prefix of %s must be text", ErrInvalidQuery, c.Field)
		}
		fmt.Fprintf(b, "(%q >= ? AND substr(%q, 1, ?) = ?)", c.Field, c.Field)
		return []any{p, int64(utf8.RuneCountInString(p)), p}, nil
	default:
		return nil, fmt.Errorf("%w: operator %q", ErrInvalidQuery, c.Op)
	}
	if c.Value == nil {
		return nil, fmt.Errorf("%w: %s %s NULL", ErrInvalidQuery, c.Field, c.Op)
	}
	return []any{c.Value}, nil
}
