package hikoutei

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// EntityDef is a declared entity type, made by Entity and passed to Open.
type EntityDef struct {
	name   string
	typ    reflect.Type // the struct type
	pk     fieldDef
	fields []fieldDef // non-key fields, declaration order
	byName map[string]int
	// subject is the index in fields of the field tagged subject (-1:
	// the primary key names the data subject).
	subject int
	err     error
}

type fieldDef struct {
	index    []int
	name     string
	kind     events.Kind
	nullable bool
	owner    events.Owner
	was      []string // earlier names (tag option was=), not part of the shape
	personal bool     // tag option personal: sealed with the subject's key (docs/erasure.md)
	subject  bool     // tag option subject: names the record's data subject
	noSheet  bool     // tag option nosheet: never sent to the spreadsheet (no column)
}

var timeType = reflect.TypeOf(time.Time{})

// Entity declares the struct type T as the entity name (also its SQLite
// table name and, later, its tab prefix). Fields are read from T's exported
// fields and their `hikoutei` tags:
//
//	type Airport struct {
//		IATA    string     `hikoutei:"iata,pk"`  // exactly one string primary key
//		Name    string     `hikoutei:"name"`
//		Alt     int64      `hikoutei:"alt"`
//		Lat     float64    `hikoutei:"lat"`
//		Opened  *time.Time `hikoutei:"opened"`   // pointer = nullable
//		Notes   string     `hikoutei:"notes,user"` // people may edit it in the sheet
//		City    string     `hikoutei:"city,was=town"` // renamed: it was "town"
//		Scratch string     `hikoutei:"-"`        // not stored
//	}
//
// The option personal marks a field holding a person's data
// (`hikoutei:"email,personal"`, a string or *string field): its values
// are sealed with the data subject's key before they reach the log, so
// Store.Erase can make them unreadable everywhere (docs/erasure.md). The
// subject is the record's primary key, or the one field tagged subject
// (`hikoutei:"customer,subject"`, a string). A primary key cannot be
// personal (ErrPersonalPrimaryKey).
//
// The option nosheet (`hikoutei:"ssn,personal,nosheet"`, any field but the
// primary key and user fields) keeps a field out of the spreadsheet: no
// tab has a column for it, so its values are never sent there; the store
// and its API keep it as any other field (docs/erasure.md). It is part of
// the recorded shape: adding or removing it changes the tab's layout,
// which the sync migrates.
//
// Supported field types: string, int, int32, int64, float64, bool,
// time.Time, and pointers to them. An untagged field's name is its Go name
// in snake_case. The option was=<old name> (repeatable, also on the key)
// declares a rename: when the store last recorded a field of that name,
// Open carries its values over to the new name (docs/evolving.md). It is
// not part of the recorded shape: it may stay in the tag for good.
// Problems are reported by Open as ErrInvalidEntity.
func Entity[T any](name string) EntityDef {
	return newEntityDef(name, reflect.TypeFor[T]())
}

func newEntityDef(name string, typ reflect.Type) EntityDef {
	d := EntityDef{name: name, typ: typ, byName: map[string]int{}, subject: -1}
	if typ.Kind() != reflect.Struct {
		d.err = fmt.Errorf("%w: %s: %s is not a struct", ErrInvalidEntity, name, typ)
		return d
	}
	d.err = d.readFields()
	return d
}

func (d *EntityDef) readFields() error {
	havePK := false
	for _, sf := range reflect.VisibleFields(d.typ) {
		f, isPK, skip, err := parseField(d.name, sf)
		if err != nil || skip {
			if err != nil {
				return err
			}
			continue
		}
		if isPK {
			if havePK || f.kind != events.KindString || f.nullable {
				return fmt.Errorf("%w: %s needs exactly one non-pointer string primary key", ErrInvalidEntity, d.name)
			}
			if f.noSheet {
				return fmt.Errorf("%w: %s.%s: the primary key cannot be nosheet: it names the sheet's rows", ErrInvalidEntity, d.name, f.name)
			}
			if f.personal {
				return fmt.Errorf("%w: %w: %s.%s: the primary key names the record in the log, its anchors, receipts and the outbox, which erasure cannot reach; tag another field personal and keep the key an opaque id",
					ErrInvalidEntity, ErrPersonalPrimaryKey, d.name, f.name)
			}
			d.pk, havePK = f, true
			continue
		}
		if err := d.addField(f); err != nil {
			return err
		}
	}
	if !havePK {
		return fmt.Errorf("%w: %s has no primary key (tag a string field `hikoutei:\"name,pk\"`)", ErrInvalidEntity, d.name)
	}
	if err := projector.ValidateShapes([]events.EntityShape{d.shape()}); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEntity, err)
	}
	return nil
}

// addField adds a non-key field, checking its personal and subject
// options.
func (d *EntityDef) addField(f fieldDef) error {
	bad := func(why string) error { return fmt.Errorf("%w: %s.%s: %s", ErrInvalidEntity, d.name, f.name, why) }
	switch {
	case f.personal && f.kind != events.KindString:
		return bad("a personal field must be a string or *string")
	case f.personal && f.owner == events.OwnerUser:
		return bad("a personal field cannot be user-edited (an edit in the sheet would reach the log unsealed)")
	case f.subject && (f.personal || f.kind != events.KindString || f.nullable):
		return bad("the subject field must be a non-pointer string that is not personal")
	case f.noSheet && f.owner == events.OwnerUser:
		return bad("a user field is edited in the sheet; nosheet keeps a field out of it")
	case f.subject && d.subject >= 0:
		return bad("only one field can name the subject")
	}
	if f.subject {
		d.subject = len(d.fields)
	}
	d.byName[f.name] = len(d.fields)
	d.fields = append(d.fields, f)
	return nil
}

func parseField(entity string, sf reflect.StructField) (f fieldDef, isPK, skip bool, err error) {
	tag := sf.Tag.Get("hikoutei")
	if !sf.IsExported() || sf.Anonymous || tag == "-" {
		return f, false, true, nil
	}
	parts := strings.Split(tag, ",")
	f.name, f.index, f.owner = parts[0], sf.Index, events.OwnerSystem
	if f.name == "" {
		f.name = snakeCase(sf.Name)
	}
	for _, opt := range parts[1:] {
		switch opt {
		case "pk":
			isPK = true
		case "user":
			f.owner = events.OwnerUser
		case "personal":
			f.personal = true
		case "subject":
			f.subject = true
		case "nosheet":
			f.noSheet = true
		default:
			if old, ok := strings.CutPrefix(opt, "was="); ok && projector.ValidIdent(old) {
				f.was = append(f.was, old)
				continue
			}
			return f, false, false, fmt.Errorf("%w: %s.%s: unknown tag option %q", ErrInvalidEntity, entity, sf.Name, opt)
		}
	}
	f.kind, f.nullable, err = fieldKind(sf.Type)
	if err != nil {
		err = fmt.Errorf("%w: %s.%s: %w", ErrInvalidEntity, entity, sf.Name, err)
	}
	return f, isPK, false, err
}

func fieldKind(t reflect.Type) (events.Kind, bool, error) {
	nullable := t.Kind() == reflect.Pointer
	if nullable {
		t = t.Elem()
	}
	if t == timeType {
		return events.KindTime, nullable, nil
	}
	switch t.Kind() {
	case reflect.String:
		return events.KindString, nullable, nil
	case reflect.Int, reflect.Int32, reflect.Int64:
		return events.KindInt, nullable, nil
	case reflect.Float64:
		return events.KindFloat, nullable, nil
	case reflect.Bool:
		return events.KindBool, nullable, nil
	}
	return "", false, fmt.Errorf("unsupported field type %s", t)
}

func snakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || (i+1 < len(rs) && unicode.IsLower(rs[i+1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Name is the entity's declared name.
func (d EntityDef) Name() string { return d.name }

// shape is the declaration's entity shape (what the engine's registry,
// the read model and the log record).
func (d EntityDef) shape() events.EntityShape {
	t := events.EntityShape{Name: d.name, PK: d.pk.name}
	for _, f := range d.fields {
		t.Fields = append(t.Fields, events.FieldShape{Name: f.name, Kind: f.kind, Nullable: f.nullable, Owner: f.owner, NoSheet: f.noSheet})
	}
	return t
}

// renames is the declaration's was= names by field (the key included).
func (d EntityDef) renames() map[string][]string {
	out := map[string][]string{}
	for _, f := range append([]fieldDef{d.pk}, d.fields...) {
		if len(f.was) > 0 {
			out[f.name] = f.was
		}
	}
	return out
}

// key reads and validates the primary key of the struct value v.
func (d EntityDef) key(v reflect.Value) (string, error) {
	id := v.FieldByIndex(d.pk.index).String()
	if err := validKey(id); err != nil {
		return "", fmt.Errorf("%w: %s %q: %s", ErrInvalidPrimaryKey, d.name, id, err)
	}
	return events.NormalizeString(id)
}

func validKey(id string) error {
	switch {
	case id == "":
		return fmt.Errorf("empty")
	case !utf8.ValidString(id):
		return fmt.Errorf("not UTF-8")
	case strings.TrimSpace(id) != id:
		return fmt.Errorf("leading or trailing white space")
	case strings.IndexFunc(id, unicode.IsControl) >= 0:
		return fmt.Errorf("control character")
	}
	return nil
}

// values returns every non-key field of v, the record with key id, as
// canonical values. Errors: ErrInvalidValue naming the record's key and
// the field (`invalid_field_value: Airport "LAX".lat: canonical_non_finite`;
// never the value).
func (d EntityDef) values(v reflect.Value, id string) (map[string]any, error) {
	out := make(map[string]any, len(d.fields))
	for _, f := range d.fields {
		cv, err := canonicalField(v.FieldByIndex(f.index), f.kind)
		if err != nil {
			return nil, fmt.Errorf("%w: %s %q.%s: %w", ErrInvalidValue, d.name, id, f.name, err)
		}
		out[f.name] = cv
	}
	return out, nil
}

// canonicalField converts a Go value to the canonical value of a field of
// kind: a struct field declared with that kind, or a query's filter value
// (any Go integer for an int field, any integer or float for a float
// field). A value of another type is an error, never a panic.
func canonicalField(fv reflect.Value, kind events.Kind) (any, error) {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil, nil
		}
		fv = fv.Elem()
	}
	switch k := fv.Kind(); {
	case kind == events.KindString && k == reflect.String:
		return events.NormalizeString(fv.String())
	case kind == events.KindInt && fv.CanInt():
		return fv.Int(), nil
	case kind == events.KindInt && fv.CanUint() && fv.Uint() <= math.MaxInt64:
		return int64(fv.Uint()), nil
	case kind == events.KindFloat && (fv.CanInt() || fv.CanUint() || fv.CanFloat()):
		return canonicalFloat(fv)
	case kind == events.KindBool && k == reflect.Bool:
		return fv.Bool(), nil
	case kind == events.KindTime && fv.Type() == timeType:
		return events.CanonicalTime(fv.Interface().(time.Time))
	}
	return nil, fmt.Errorf("a %s cannot be a %s value", fv.Type(), kind)
}

func canonicalFloat(fv reflect.Value) (any, error) {
	var f float64
	switch {
	case fv.CanInt():
		f = float64(fv.Int())
	case fv.CanUint():
		f = float64(fv.Uint())
	default:
		f = fv.Float()
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, events.ErrNonFinite
	}
	return f + 0, nil // -0 → 0
}
