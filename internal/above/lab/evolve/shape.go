package evolve

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

// kind is a field's Go kind in the family (the only three it uses).
type kind int

const (
	kindString kind = iota
	kindInt
	kindFloat
)

// field is one declared field of a shape (the key apart).
type field struct {
	name  string
	kind  kind
	user  bool
	index int // in the struct
}

// rec is a record's field values by name, the key apart: string, int64
// or float64, as the application reads them.
type rec map[string]any

func (r rec) clone() rec {
	out := make(rec, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// shape is one Go type of an entity, read through reflection: its key
// and fields as the hikoutei tags declare them, and typed access to the
// store (Find, Persist, Remove, a migration) by value maps.
type shape struct {
	name    string // the version's name ("V3")
	entity  string
	pk      string
	pkIndex int
	fields  []field
	typ     reflect.Type
	def     hikoutei.EntityDef
	find    func(ctx context.Context, s *hikoutei.Store, opts ...hikoutei.QueryOption) (map[string]rec, error)
}

// newShape reads T's tags.
func newShape[T any](name, entity string) *shape {
	sh := &shape{name: name, entity: entity, typ: reflect.TypeFor[T](), def: hikoutei.Entity[T](entity)}
	for i := range sh.typ.NumField() {
		f := sh.typ.Field(i)
		parts := strings.Split(f.Tag.Get("hikoutei"), ",")
		fl := field{name: parts[0], index: i, kind: kindOf(f.Type)}
		for _, p := range parts[1:] {
			switch p {
			case "pk":
				sh.pk, sh.pkIndex = fl.name, i
				fl.name = ""
			case "user":
				fl.user = true
			}
		}
		if fl.name != "" {
			sh.fields = append(sh.fields, fl)
		}
	}
	sh.find = func(ctx context.Context, s *hikoutei.Store, opts ...hikoutei.QueryOption) (map[string]rec, error) {
		all, err := hikoutei.Find[T](ctx, s, opts...)
		if err != nil {
			return nil, err
		}
		out := make(map[string]rec, len(all))
		for _, p := range all {
			id, r := sh.read(reflect.ValueOf(p).Elem())
			out[id] = r
		}
		return out, nil
	}
	return sh
}

func kindOf(t reflect.Type) kind {
	switch t.Kind() {
	case reflect.Int64:
		return kindInt
	case reflect.Float64:
		return kindFloat
	case reflect.String:
		return kindString
	}
	panic(fmt.Sprintf("evolve: a field of kind %s", t))
}

// read is the key and values of the struct v.
func (sh *shape) read(v reflect.Value) (string, rec) {
	r := make(rec, len(sh.fields))
	for _, f := range sh.fields {
		r[f.name] = v.Field(f.index).Interface()
	}
	return v.Field(sh.pkIndex).String(), r
}

// fill sets the struct v from a key and values (a value absent: zero).
func (sh *shape) fill(v reflect.Value, id string, r rec) {
	v.Field(sh.pkIndex).SetString(id)
	for _, f := range sh.fields {
		if x, ok := r[f.name]; ok {
			v.Field(f.index).Set(reflect.ValueOf(x))
		}
	}
}

// value is a *T holding id and r, for Unit.Persist and Unit.Remove.
func (sh *shape) value(id string, r rec) any {
	p := reflect.New(sh.typ)
	sh.fill(p.Elem(), id, r)
	return p.Interface()
}

// get reads one record (false when it does not exist).
func (sh *shape) get(ctx context.Context, s *hikoutei.Store, id string) (rec, bool, error) {
	m, err := sh.find(ctx, s, hikoutei.Where(sh.pk, id), hikoutei.Limit(1))
	if err != nil {
		return nil, false, err
	}
	r, ok := m[id]
	return r, ok, nil
}

func (sh *shape) field(name string) (field, bool) {
	for _, f := range sh.fields {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// userFields are the fields people edit.
func (sh *shape) userFields() []field {
	var out []field
	for _, f := range sh.fields {
		if f.user {
			out = append(out, f)
		}
	}
	return out
}

// shown is a record as a tab's comparison wants it: values by field
// name, the key included.
func (sh *shape) shown(id string, r rec) map[string]any {
	out := make(map[string]any, len(r)+1)
	for k, v := range r {
		out[k] = v
	}
	out[sh.pk] = id
	return out
}

// migrator makes the migration Old → New of the entity that maps each
// record with fn (by value maps).
func migrator[Old, New any](from, to *shape) func(version string, fn mapFn) hikoutei.Migration {
	return func(version string, fn mapFn) hikoutei.Migration {
		return hikoutei.Migrate[Old, New](from.entity, version, func(o Old) (New, error) {
			id, r := from.read(reflect.ValueOf(&o).Elem())
			id, r = fn(id, r)
			var n New
			to.fill(reflect.ValueOf(&n).Elem(), id, r)
			return n, nil
		})
	}
}

// mapFn maps one record (key and values) to the next shape.
type mapFn func(id string, r rec) (string, rec)
