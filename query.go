package hikoutei

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// Reader is where typed reads come from: a *Store, a *Unit (which also
// remembers what it loaded, so a changed primary key is caught at
// Persist), or a *View (the store as of a past sequence, see AsOf).
// Reads always come from a SQLite read model.
type Reader interface {
	reads() reads
	track(ptr any, id string)
}

// reads is what a Reader's typed reads need: the declared Go types and
// read connections to a read model.
type reads struct {
	byType map[reflect.Type]*EntityDef
	conns  readConns
	keys   *keys // opens personal values (nil: none can be opened)
}

// readConns lends read-only connections to a read model.
type readConns interface {
	ReadConn(ctx context.Context) (*sqlite.Conn, error)
	PutConn(c *sqlite.Conn)
}

func (s *Store) reads() reads            { return reads{byType: s.byType, conns: s.e, keys: s.keys} }
func (s *Store) track(any, string)       {}
func (u *Unit) reads() reads             { return u.store.reads() }
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
	field  string
	op     Op
	value  any
	values []any // In
}

// Op is a comparison of WhereCmp.
type Op = projector.Op

// Comparisons of WhereCmp. Strings compare byte by byte (the order of
// Go's < on strings, not a locale's), numbers by value, times by instant,
// booleans false < true.
const (
	Eq Op = ""
	Lt Op = "<"
	Le Op = "<="
	Gt Op = ">"
	Ge Op = ">="
)

// Where keeps entities whose field equals value (compared canonically:
// strings NFC, times UTC at millisecond precision; nil matches NULL).
// Field names are the entity's column names, including the primary key.
func Where(field string, value any) QueryOption {
	return func(q *query) { q.where = append(q.where, cond{field: field, value: value}) }
}

// WhereCmp keeps entities whose field compares to value by op (Eq, Lt,
// Le, Gt, Ge), e.g. WhereCmp("altitude", hikoutei.Ge, 5000). value must
// be of the field's kind and not nil (except with Eq: NULL); a NULL
// field never matches an ordering.
func WhereCmp(field string, op Op, value any) QueryOption {
	return func(q *query) { q.where = append(q.where, cond{field: field, op: op, value: value}) }
}

// WhereIn keeps entities whose field equals one of values (none: no
// entity). Each value must be of the field's kind and not nil.
func WhereIn(field string, values ...any) QueryOption {
	return func(q *query) {
		q.where = append(q.where, cond{field: field, op: projector.OpIn, values: append([]any{}, values...)})
	}
}

// WherePrefix keeps entities whose text field starts with prefix,
// exactly (case-sensitive; '%', '_' and '*' are ordinary characters).
func WherePrefix(field, prefix string) QueryOption {
	return func(q *query) { q.where = append(q.where, cond{field: field, op: projector.OpPrefix, value: prefix}) }
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
	pq, err := d.projectorQuery(buildQuery(opts))
	if err != nil {
		return nil, err
	}
	src := r.reads().conns
	conn, err := src.ReadConn(ctx)
	if err != nil {
		return nil, err
	}
	defer src.PutConn(conn)
	var out []*T
	k := r.reads().keys
	err = projector.Select(conn, d.shape(), pq, func(vals []any) error {
		v := new(T)
		if err := d.fill(reflect.ValueOf(v).Elem(), vals, k); err != nil {
			return err
		}
		r.track(v, vals[0].(string))
		out = append(out, v)
		return nil
	})
	return out, err
}

// Count returns how many entities of type T match every Where (Order,
// Limit and Offset do not apply). Errors as Find.
func Count[T any](ctx context.Context, r Reader, opts ...QueryOption) (int, error) {
	d, err := defFor[T](r)
	if err != nil {
		return 0, err
	}
	pq, err := d.projectorQuery(buildQuery(opts))
	if err != nil {
		return 0, err
	}
	src := r.reads().conns
	conn, err := src.ReadConn(ctx)
	if err != nil {
		return 0, err
	}
	defer src.PutConn(conn)
	n, err := projector.Count(conn, d.shape(), pq)
	return int(n), err
}

func buildQuery(opts []QueryOption) query {
	q := query{}
	for _, o := range opts {
		o(&q)
	}
	return q
}

func defFor[T any](r Reader) (*EntityDef, error) {
	d := r.reads().byType[reflect.TypeFor[T]()]
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
	for _, o := range q.order {
		if d.isPersonal(o.Field) {
			return pq, fmt.Errorf("%w: %s.%s is personal: its values are sealed and cannot be ordered by", ErrInvalidQuery, d.name, o.Field)
		}
	}
	for _, c := range q.where {
		pc, err := d.projectorCond(c)
		if err != nil {
			return pq, err
		}
		pq.Where = append(pq.Where, pc)
	}
	return pq, nil
}

// projectorCond checks one condition against its field and converts its
// values to canonical values of the field's kind.
func (d *EntityDef) projectorCond(c cond) (projector.Cond, error) {
	kind, ok := d.columnKind(c.field)
	if !ok {
		return projector.Cond{}, fmt.Errorf("%w: %w: %s.%s", ErrInvalidQuery, ErrUnknownField, d.name, c.field)
	}
	if d.isPersonal(c.field) {
		return projector.Cond{}, fmt.Errorf("%w: %s.%s is personal: its values are sealed and cannot be filtered on", ErrInvalidQuery, d.name, c.field)
	}
	bad := func(err error) (projector.Cond, error) {
		return projector.Cond{}, fmt.Errorf("%w: %w: %s.%s: %w", ErrInvalidQuery, ErrInvalidValue, d.name, c.field, err)
	}
	pc := projector.Cond{Field: c.field, Op: c.op}
	switch c.op {
	case Eq, Lt, Le, Gt, Ge:
	case projector.OpPrefix:
		if kind != events.KindString {
			return bad(fmt.Errorf("a prefix needs a text field, not %s", kind))
		}
	case projector.OpIn:
		for _, x := range c.values {
			v, err := queryValue(kind, x)
			if err == nil && v == nil {
				err = errors.New("nil is never one of IN's values")
			}
			if err != nil {
				return bad(err)
			}
			pc.Values = append(pc.Values, v)
		}
		return pc, nil
	default:
		return projector.Cond{}, fmt.Errorf("%w: %s.%s: unknown operator %q", ErrInvalidQuery, d.name, c.field, c.op)
	}
	v, err := queryValue(kind, c.value)
	if err == nil && v == nil && c.op != Eq {
		err = fmt.Errorf("%s nil matches nothing; use Where(field, nil) for NULL", c.op)
	}
	if err != nil {
		return bad(err)
	}
	pc.Value = v
	return pc, nil
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
// first, then the fields in declaration order), opening sealed values
// with k (Erased for an erased subject's).
func (d *EntityDef) fill(v reflect.Value, vals []any, k *keys) error {
	v.FieldByIndex(d.pk.index).SetString(vals[0].(string))
	masked := d.anyInClear(vals) && k.subjectErased(d.subjectValue(vals))
	for i, f := range d.fields {
		val, err := k.openValue(d.name, f.name, vals[i+1])
		if err != nil {
			return fmt.Errorf("%s %q: %w", d.name, vals[0], err)
		}
		if _, erased := val.(ErasedValue); erased || (masked && f.personal && inClear(vals[i+1])) {
			val = Erased // sealed and erased, or written in clear before the field was personal
		}
		setField(v.FieldByIndex(f.index), val)
	}
	return nil
}

// anyInClear reports whether a personal field of an entity's canonical
// values holds a value in clear (written before the field was personal).
func (d *EntityDef) anyInClear(vals []any) bool {
	for i, f := range d.fields {
		if f.personal && inClear(vals[i+1]) {
			return true
		}
	}
	return false
}

// subjectValue is the data subject of an entity's canonical values (the
// key first, then the fields in declaration order).
func (d *EntityDef) subjectValue(vals []any) any {
	if d.subject < 0 {
		return vals[0]
	}
	return vals[1+d.subject]
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
