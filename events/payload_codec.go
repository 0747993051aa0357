package events

import (
	"fmt"
	"reflect"
	"strings"
	"time"
)

// A payload struct maps to a canonical map field by field, through each
// field's `canon:"key[,omitempty][,required]"` tag:
//
//	string, named string types   ↔ string
//	bool                         ↔ bool
//	int64                        ↔ int64
//	uint64                       ↔ int64 (never negative)
//	time.Time                    ↔ time (the zero time ↔ null)
//	any                          ↔ any canonical value
//	map[string]any               ↔ map (nil ↔ null)
//	map[string]string/int64/uint64 ↔ map
//	[]S, S a struct of the same kind ↔ list of maps
//
// Every key is present unless omitempty and zero. Decoding rejects keys the
// struct does not have and values of the wrong type; an absent key decodes
// as the zero value, unless required.
type structPlan struct {
	typ    reflect.Type
	list   []fieldPlan
	byKey  map[string]int
	sorted []int // indices into list in canonical key order (payload_encoder.go)
}

type fieldPlan struct {
	Field
	index    int
	required bool
	elem     *structPlan // []S: S's plan
}

var timeType = reflect.TypeFor[time.Time]()

// planFor builds the codec plan of struct type t (panics on a field it
// cannot map: catalogue types are checked at init).
func planFor(t reflect.Type) *structPlan {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("events: payload %s is not a struct", t))
	}
	p := &structPlan{typ: t, byKey: map[string]int{}}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("canon")
		if !ok || !sf.IsExported() {
			panic(fmt.Sprintf("events: %s.%s has no canon tag", t, sf.Name))
		}
		parts := strings.Split(tag, ",")
		fp := fieldPlan{Field: Field{Key: parts[0], GoName: sf.Name, Go: sf.Type}, index: i}
		for _, opt := range parts[1:] {
			fp.OmitEmpty = fp.OmitEmpty || opt == "omitempty"
			fp.required = fp.required || opt == "required"
		}
		if sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct {
			fp.elem = planFor(sf.Type.Elem())
		} else if !codable(sf.Type) {
			panic(fmt.Sprintf("events: %s.%s: unsupported type %s", t, sf.Name, sf.Type))
		}
		if _, dup := p.byKey[fp.Key]; dup {
			panic(fmt.Sprintf("events: %s has two fields keyed %q", t, fp.Key))
		}
		p.byKey[fp.Key] = len(p.list)
		p.list = append(p.list, fp)
	}
	p.sortKeys()
	return p
}

func codable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int64, reflect.Uint64:
		return true
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Struct:
		return t == timeType
	case reflect.Map:
		k := t.Elem().Kind()
		return t.Key().Kind() == reflect.String && (k == reflect.Interface && t.Elem().NumMethod() == 0 ||
			k == reflect.String || k == reflect.Int64 || k == reflect.Uint64)
	}
	return false
}

func (p *structPlan) fields() []Field {
	out := make([]Field, len(p.list))
	for i, f := range p.list {
		out[i] = f.Field
	}
	return out
}

// encode returns the canonical map of struct value v.
func (p *structPlan) encode(v reflect.Value) map[string]any {
	m := make(map[string]any, len(p.list))
	for i := range p.list {
		f := &p.list[i]
		fv := v.Field(f.index)
		if f.OmitEmpty && fv.IsZero() {
			continue
		}
		m[f.Key] = f.encode(fv)
	}
	return m
}

func (f *fieldPlan) encode(v reflect.Value) any {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return v.Bool()
	case reflect.Int64:
		return v.Int()
	case reflect.Uint64:
		return int64(v.Uint())
	case reflect.Interface:
		return v.Interface()
	case reflect.Struct:
		if t := v.Interface().(time.Time); !t.IsZero() {
			return t
		}
		return nil
	case reflect.Slice:
		return f.encodeList(v)
	}
	return encodeMap(v)
}

func (f *fieldPlan) encodeList(v reflect.Value) any {
	if v.IsNil() {
		return nil
	}
	out := make([]any, v.Len())
	for i := range out {
		out[i] = f.elem.encode(v.Index(i))
	}
	return out
}

func encodeMap(v reflect.Value) any {
	if v.IsNil() {
		return nil
	}
	switch m := v.Interface().(type) {
	case map[string]any:
		return m
	case map[string]uint64: // revisions: every commit encodes one
		out := make(map[string]any, len(m))
		for k, n := range m {
			out[k] = int64(n)
		}
		return out
	}
	out := make(map[string]any, v.Len())
	for it := v.MapRange(); it.Next(); {
		e := it.Value()
		switch e.Kind() {
		case reflect.String:
			out[it.Key().String()] = e.String()
		case reflect.Uint64:
			out[it.Key().String()] = int64(e.Uint())
		default:
			out[it.Key().String()] = e.Int()
		}
	}
	return out
}

// decode fills struct value v from the canonical map m.
func (p *structPlan) decode(v reflect.Value, m map[string]any) error {
	for k, raw := range m {
		i, ok := p.byKey[k]
		if !ok {
			return fmt.Errorf("unknown key %q", k)
		}
		if err := p.list[i].decode(v.Field(p.list[i].index), raw); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	for _, f := range p.list {
		if f.required && v.Field(f.index).IsZero() {
			return fmt.Errorf("%s is required", f.Key)
		}
	}
	return nil
}

func (f *fieldPlan) decode(v reflect.Value, raw any) error {
	if raw == nil {
		v.SetZero()
		return nil
	}
	switch v.Kind() {
	case reflect.String:
		s, ok := raw.(string)
		v.SetString(s)
		return wrongType(ok, raw)
	case reflect.Bool:
		b, ok := raw.(bool)
		v.SetBool(b)
		return wrongType(ok, raw)
	case reflect.Int64:
		n, ok := raw.(int64)
		v.SetInt(n)
		return wrongType(ok, raw)
	case reflect.Uint64:
		n, ok := raw.(int64)
		v.SetUint(uint64(n))
		return wrongType(ok && n >= 0, raw)
	case reflect.Interface:
		v.Set(reflect.ValueOf(raw))
		return nil
	case reflect.Struct:
		t, ok := raw.(time.Time)
		v.Set(reflect.ValueOf(t))
		return wrongType(ok, raw)
	case reflect.Slice:
		return f.decodeList(v, raw)
	}
	return decodeMap(v, raw)
}

func wrongType(ok bool, raw any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("unexpected %T value", raw)
}

func (f *fieldPlan) decodeList(v reflect.Value, raw any) error {
	list, ok := raw.([]any)
	if !ok {
		return wrongType(false, raw)
	}
	out := reflect.MakeSlice(v.Type(), len(list), len(list))
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return fmt.Errorf("item %d: %w", i, wrongType(false, item))
		}
		if err := f.elem.decode(out.Index(i), m); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
	}
	v.Set(out)
	return nil
}

func decodeMap(v reflect.Value, raw any) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return wrongType(false, raw)
	}
	if v.Type().Elem().Kind() == reflect.Interface {
		v.Set(reflect.ValueOf(m))
		return nil
	}
	if v.Type() == reflect.TypeFor[map[string]uint64]() { // revisions: every replayed persist decodes one
		return decodeRevisions(v, m)
	}
	out := reflect.MakeMapWithSize(v.Type(), len(m))
	for k, e := range m {
		ev := reflect.New(v.Type().Elem()).Elem()
		if err := (&fieldPlan{}).decode(ev, e); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		out.SetMapIndex(reflect.ValueOf(k), ev)
	}
	v.Set(out)
	return nil
}

func decodeRevisions(v reflect.Value, m map[string]any) error {
	out := make(map[string]uint64, len(m))
	for k, e := range m {
		n, ok := e.(int64)
		if !ok || n < 0 {
			return fmt.Errorf("%s: %w", k, wrongType(false, e))
		}
		out[k] = uint64(n)
	}
	v.Set(reflect.ValueOf(out))
	return nil
}
