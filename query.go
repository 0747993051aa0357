package hikoutei

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
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
	order  []projector.Order
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
	return func(q *query) { q.order = append(q.order, projector.Order{Field: field}) }
}

// OrderByDesc sorts descending by field.
func OrderByDesc(field string) QueryOption {
	return func(q *query) { q.order = append(q.order, projector.Order{Field: field, Desc: true}) }
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
// Errors: ErrInvalidQuery (wrapping ErrUnknownField or ErrInvalidValue:
// a filter value must match its field's kind), ErrUnregisteredType,
// ErrStoreClosed.
func Find[T any](ctx context.Context, r Reader, opts ...QueryOption) ([]*T, error) {
	d, err := defFor[T](r)
	if err != nil {
		return nil, err
	}
	q := query{}
	for _, o := range opts {
		o(&q)
	}
	pq, err := d.projectorQuery(q)
	if err != nil {
		return nil, err
	}
	s := r.readStore()
	conn, err := s.e.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer s.e.PutConn(conn)
	var out []*T
	err = projector.Select(conn, d.shape(), pq, func(vals []any) error {
		v := new(T)
		if err := d.fill(reflect.ValueOf(v).Elem(), vals); err != nil {
			return err
		}
		r.track(v, vals[0].(string))
		out = append(out, v)
		return nil
	})
	return out, err
}

func defFor[T any](r Reader) (*EntityDef, error) {
	d := r.readStore().byType[reflect.TypeFor[T]()]
	if d == nil {
		return nil, fmt.Errorf("%w: %s", ErrUnregisteredType, reflect.TypeFor[T]())
	}
	return d, nil
}

func (d *EntityDef) columnKind(name string) (events.Kind, bool) {
	if name == d.pk.name {
		return events.KindString, true
	}
	if i, ok := d.byName[name]; ok {
		return d.fields[i].kind, true
	}
	return "", false
}

// projectorQuery converts a query's filter values to canonical values of
// their fields' kinds.
func (d *EntityDef) projectorQuery(q query) (projector.Query, error) {
	pq := projector.Query{Order: q.order, Limit: q.limit, Offset: q.offset}
	for _, c := range q.where {
		kind, ok := d.columnKind(c.field)
		if !ok {
			return pq, fmt.Errorf("%w: %w: %s.%s", ErrInvalidQuery, ErrUnknownField, d.name, c.field)
		}
		v, err := queryValue(kind, c.value)
		if err != nil {
			return pq, fmt.Errorf("%w: %w: %s.%s: %w", ErrInvalidQuery, ErrInvalidValue, d.name, c.field, err)
		}
		pq.Where = append(pq.Where, projector.Cond{Field: c.field, Value: v})
	}
	return pq, nil
}

// queryValue converts a filter value to the canonical value of kind.
func queryValue(kind events.Kind, v any) (any, error) {
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
	return canonicalField(rv, kind)
}

// fill sets the struct v from an entity's canonical values (the key
// first, then the fields in declaration order).
func (d *EntityDef) fill(v reflect.Value, vals []any) error {
	v.FieldByIndex(d.pk.index).SetString(vals[0].(string))
	for i, f := range d.fields {
		setField(v.FieldByIndex(f.index), vals[i+1])
	}
	return nil
}

// setField sets a struct field from a canonical value (nil = zero).
func setField(fv reflect.Value, val any) {
	if val == nil {
		fv.SetZero()
		return
	}
	if fv.Kind() == reflect.Pointer {
		fv.Set(reflect.New(fv.Type().Elem()))
		fv = fv.Elem()
	}
	switch x := val.(type) {
	case string:
		fv.SetString(x)
	case int64:
		fv.SetInt(x)
	case float64:
		fv.SetFloat(x)
	case bool:
		fv.SetBool(x)
	case time.Time:
		fv.Set(reflect.ValueOf(x))
	}
}
