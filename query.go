package hikoutei

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/projector"
)

// Reader is where typed reads come from: a *Store, or a *Unit (which also
// remembers what it loaded, so a changed primary key is caught at Persist).
// Reads always come from the SQLite read model.
type Reader interface {
	readStore() *Store
	track(ptr any, id string)
}

func (s *Store) readStore() *Store       { return s }
func (s *Store) track(any, string)       {}
func (u *Unit) readStore() *Store        { return u.store }
func (u *Unit) track(ptr any, id string) { u.loaded[ptr] = id }

// QueryOption narrows, orders or pages a Find.
type QueryOption func(*query)

type query struct {
	where  []cond
	order  []string
	limit  int
	offset int
}

type cond struct {
	field string
	value any
}

// Where keeps entities whose field equals value (compared canonically:
// strings NFC, times UTC at millisecond precision; nil matches NULL).
// Field names are the entity's column names, including the primary key.
func Where(field string, value any) QueryOption {
	return func(q *query) { q.where = append(q.where, cond{field, value}) }
}

// OrderBy sorts ascending by field; several OrderBy/OrderByDesc chain.
func OrderBy(field string) QueryOption {
	return func(q *query) { q.order = append(q.order, field+" ASC") }
}

// OrderByDesc sorts descending by field.
func OrderByDesc(field string) QueryOption {
	return func(q *query) { q.order = append(q.order, field+" DESC") }
}

// Limit returns at most n entities (n <= 0: no limit).
func Limit(n int) QueryOption { return func(q *query) { q.limit = n } }

// Offset skips the first n matches.
func Offset(n int) QueryOption { return func(q *query) { q.offset = n } }

// Get returns the entity of type T with primary key id.
// Errors: ErrNotFound, ErrUnregisteredType, ErrStoreClosed.
func Get[T any](ctx context.Context, r Reader, id string) (*T, error) {
	d, err := defFor[T](r)
	if err != nil {
		return nil, err
	}
	out, err := Find[T](ctx, r, Where(d.pk.name, id), Limit(1))
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s %q", ErrNotFound, d.name, id)
	}
	return out[0], nil
}

// FindOne returns the single entity matching opts.
// Errors: ErrNotFound (none), ErrNonUnique (several), as Find.
func FindOne[T any](ctx context.Context, r Reader, opts ...QueryOption) (*T, error) {
	out, err := Find[T](ctx, r, append(opts, Limit(2))...)
	switch {
	case err != nil:
		return nil, err
	case len(out) == 0:
		return nil, ErrNotFound
	case len(out) > 1:
		return nil, ErrNonUnique
	}
	return out[0], nil
}

// Find returns the entities of type T matching every Where, in the given
// order (default: primary key), paged by Limit/Offset.
// Errors: ErrUnknownField, ErrInvalidValue, ErrUnregisteredType, ErrStoreClosed.
func Find[T any](ctx context.Context, r Reader, opts ...QueryOption) ([]*T, error) {
	d, err := defFor[T](r)
	if err != nil {
		return nil, err
	}
	q := query{}
	for _, o := range opts {
		o(&q)
	}
	sqlText, args, err := d.selectSQL(q)
	if err != nil {
		return nil, err
	}
	s := r.readStore()
	conn, err := s.readConn(ctx)
	if err != nil {
		return nil, err
	}
	defer s.pool.Put(conn)
	return scanAll[T](conn, d, r, sqlText, args)
}

func defFor[T any](r Reader) (*EntityDef, error) {
	d := r.readStore().byType[reflect.TypeFor[T]()]
	if d == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnregisteredType, reflect.TypeFor[T]())
	}
	return d, nil
}

func (s *Store) readConn(ctx context.Context) (*sqlite.Conn, error) {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil, ErrStoreClosed
	}
	return s.pool.Take(ctx)
}

func (d *EntityDef) columnKind(name string) (projector.Kind, bool) {
	if name == d.pk.name {
		return projector.KindString, true
	}
	if i, ok := d.byName[name]; ok {
		return d.fields[i].kind, true
	}
	return "", false
}

func (d *EntityDef) selectSQL(q query) (string, []any, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %q", d.pk.name)
	for _, f := range d.fields {
		fmt.Fprintf(&b, ", %q", f.name)
	}
	fmt.Fprintf(&b, " FROM %q", d.name)
	args, err := d.whereSQL(&b, q.where)
	if err != nil {
		return "", nil, err
	}
	if err := d.orderSQL(&b, q.order); err != nil {
		return "", nil, err
	}
	if q.limit > 0 || q.offset > 0 {
		limit := q.limit
		if limit <= 0 {
			limit = -1 // SQLite: no limit
		}
		fmt.Fprintf(&b, " LIMIT %d OFFSET %d", limit, max(q.offset, 0))
	}
	return b.String(), args, nil
}

func (d *EntityDef) whereSQL(b *strings.Builder, conds []cond) ([]any, error) {
	var args []any
	for i, c := range conds {
		kind, ok := d.columnKind(c.field)
		if !ok {
			return nil, fmt.Errorf("%w: %s.%s", ErrUnknownField, d.name, c.field)
		}
		b.WriteString(map[bool]string{true: " WHERE ", false: " AND "}[i == 0])
		v, err := queryValue(kind, c.value)
		if err != nil {
			return nil, fmt.Errorf("%w: %s.%s: %w", ErrInvalidValue, d.name, c.field, err)
		}
		if v == nil {
			fmt.Fprintf(b, "%q IS NULL", c.field)
			continue
		}
		fmt.Fprintf(b, "%q = ?", c.field)
		args = append(args, v)
	}
	return args, nil
}

func (d *EntityDef) orderSQL(b *strings.Builder, order []string) error {
	if len(order) == 0 {
		order = []string{d.pk.name + " ASC"}
	}
	for i, o := range order {
		field, dir, _ := strings.Cut(o, " ")
		if _, ok := d.columnKind(field); !ok {
			return fmt.Errorf("%w: %s.%s", ErrUnknownField, d.name, field)
		}
		b.WriteString(map[bool]string{true: " ORDER BY ", false: ", "}[i == 0])
		fmt.Fprintf(b, "%q %s", field, dir)
	}
	return nil
}

// queryValue converts a filter value to what the column stores.
func queryValue(kind projector.Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, nil
		}
		rv = rv.Elem()
	}
	cv, err := canonicalField(rv, kind)
	if t, ok := cv.(time.Time); ok && err == nil {
		return t.Format(projector.TimeLayout), nil
	}
	return cv, err
}

func scanAll[T any](conn *sqlite.Conn, d *EntityDef, r Reader, sqlText string, args []any) ([]*T, error) {
	stmt, err := conn.Prepare(sqlText)
	if err != nil {
		return nil, err
	}
	defer stmt.Reset()
	for i, a := range args {
		projector.BindValue(stmt, i+1, a)
	}
	var out []*T
	for {
		ok, err := stmt.Step()
		if err != nil || !ok {
			return out, err
		}
		v := new(T)
		if err := d.scan(stmt, reflect.ValueOf(v).Elem()); err != nil {
			return nil, err
		}
		r.track(v, stmt.ColumnText(0))
		out = append(out, v)
	}
}

// scan fills the struct v from a row selected by selectSQL.
func (d *EntityDef) scan(stmt *sqlite.Stmt, v reflect.Value) error {
	v.FieldByIndex(d.pk.index).SetString(stmt.ColumnText(0))
	for i, f := range d.fields {
		if err := setField(v.FieldByIndex(f.index), f.kind, stmt, i+1); err != nil {
			return fmt.Errorf("%s.%s: %w", d.name, f.name, err)
		}
	}
	return nil
}

func setField(fv reflect.Value, kind projector.Kind, stmt *sqlite.Stmt, col int) error {
	if stmt.ColumnType(col) == sqlite.TypeNull {
		fv.SetZero()
		return nil
	}
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	switch kind {
	case projector.KindString:
		fv.SetString(stmt.ColumnText(col))
	case projector.KindInt:
		fv.SetInt(stmt.ColumnInt64(col))
	case projector.KindFloat:
		fv.SetFloat(stmt.ColumnFloat(col))
	case projector.KindBool:
		fv.SetBool(stmt.ColumnInt64(col) != 0)
	case projector.KindTime:
		t, err := time.Parse(projector.TimeLayout, stmt.ColumnText(col))
		if err != nil {
			return err
		}
		fv.Set(reflect.ValueOf(t))
	}
	return nil
}
