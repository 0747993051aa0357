package evolve

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// Class is a kind of shape change the campaign makes (the counts are by
// class).
type Class int

// The classes: what the issue lists, each a transition of the graph.
const (
	AddField Class = iota
	AddUserField
	DropSystemField
	DropUserField
	MakeEditable
	MakeNotEditable
	Reorder
	Rename
	Widen
	Narrow          // float → int: incompatible when a value is not integral
	RetypeTextFloat // text → float: incompatible when a text is not a number's
	RetypeFloatText
	KeyChange // another field as the key: incompatible while the entity has records
	KeyRename
	AddEntity
	RemoveEntity // incompatible while the entity has records (no migration maps it)
	classCount
)

var classNames = [classCount]string{"add_field", "add_user_field", "drop_system_field", "drop_user_field", "make_editable",
	"make_not_editable", "reorder", "rename", "widen", "narrow", "retype_text_float", "retype_float_text", "key_change",
	"key_rename", "add_entity", "remove_entity"}

func (c Class) String() string {
	if c < 0 || c >= classCount {
		return "class(" + strconv.Itoa(int(c)) + ")"
	}
	return classNames[c]
}

// The entity names.
const (
	itemEntity  = "Item"
	otherEntity = "Other"
)

// The shapes of the family, by version name.
var (
	shapes = map[string]*shape{}
	other  = newShape[Other]("Other", otherEntity)
)

func init() {
	for _, sh := range []*shape{newShape[V1]("V1", itemEntity), newShape[V2]("V2", itemEntity), newShape[V3]("V3", itemEntity),
		newShape[V4]("V4", itemEntity), newShape[V5]("V5", itemEntity), newShape[V6]("V6", itemEntity), newShape[V7]("V7", itemEntity),
		newShape[V8]("V8", itemEntity), newShape[V9]("V9", itemEntity), newShape[VN]("VN", itemEntity), newShape[VK]("VK", itemEntity),
		newShape[VR]("VR", itemEntity)} {
		shapes[sh.name] = sh
	}
	graph = buildGraph()
}

// transition is one edge of the graph: Item's shape from → to. The
// expected class of the recorded change is additive/compatible unless
// incompatible says some current record cannot take it; then the change
// is refused without a migration, and migrate (when not nil) maps it with
// fn, the application's function.
type transition struct {
	class    Class
	from, to string
	change   events.ChangeKind // the kind of change the log records for it
	field    string            // the field it names ("" for the key or the whole entity)
	additive bool
	// auto maps a record as the store does when every record takes the
	// change (nil: unchanged).
	auto mapFn
	// refuses: the record cannot take the change (nil: every record can).
	refuses func(r rec) bool
	fn      mapFn
	migrate func(version string, fn mapFn) hikoutei.Migration
}

// graph is every transition, by the version it leaves.
var graph map[string][]*transition

func buildGraph() map[string][]*transition {
	s := func(n string) *shape { return shapes[n] }
	ts := []*transition{
		{class: AddField, from: "V1", to: "V2", change: events.ChangeFieldAdded, field: "size", additive: true, auto: add("size", int64(0))},
		{class: DropSystemField, from: "V2", to: "V1", change: events.ChangeFieldDropped, field: "size", auto: drop("size")},
		{class: AddUserField, from: "V2", to: "V3", change: events.ChangeFieldAdded, field: "tag", additive: true, auto: add("tag", "")},
		{class: DropUserField, from: "V3", to: "V2", change: events.ChangeFieldDropped, field: "tag", auto: drop("tag")},
		{class: MakeEditable, from: "V3", to: "V4", change: events.ChangeOwnerChanged, field: "name"},
		{class: MakeNotEditable, from: "V4", to: "V3", change: events.ChangeOwnerChanged, field: "name"},
		{class: Reorder, from: "V3", to: "V5", change: events.ChangeFieldsReordered},
		{class: Reorder, from: "V5", to: "V3", change: events.ChangeFieldsReordered},
		{class: Rename, from: "V3", to: "V6", change: events.ChangeFieldRenamed, field: "title", auto: rename("name", "title")},
		{class: Rename, from: "V6", to: "V3", change: events.ChangeFieldRenamed, field: "name", auto: rename("title", "name")},
		{class: Widen, from: "V3", to: "V7", change: events.ChangeFieldRetyped, field: "count", auto: intToFloat("count")},
		{class: Narrow, from: "V7", to: "V3", change: events.ChangeFieldRetyped, field: "count", auto: floatToInt("count"),
			refuses: notIntegral("count"), fn: roundFloat("count"), migrate: migrator[V7, V3](s("V7"), s("V3"))},
		{class: RetypeTextFloat, from: "V3", to: "V8", change: events.ChangeFieldRetyped, field: "name", auto: textToFloat("name"),
			refuses: notNumberText("name"), fn: textToFloat("name"), migrate: migrator[V3, V8](s("V3"), s("V8"))},
		{class: RetypeFloatText, from: "V8", to: "V3", change: events.ChangeFieldRetyped, field: "name", auto: floatToText("name")},
		{class: DropUserField, from: "V3", to: "V9", change: events.ChangeFieldDropped, field: "notes", auto: drop("notes")},
		{class: AddUserField, from: "V9", to: "V3", change: events.ChangeFieldAdded, field: "notes", additive: true, auto: add("notes", "")},
		{class: MakeNotEditable, from: "V3", to: "VN", change: events.ChangeOwnerChanged, field: "notes"},
		{class: MakeEditable, from: "VN", to: "V3", change: events.ChangeOwnerChanged, field: "notes"},
		{class: KeyChange, from: "V3", to: "VK", change: events.ChangeKeyChanged, auto: toCode,
			refuses: always, fn: toCode, migrate: migrator[V3, VK](s("V3"), s("VK"))},
		{class: KeyChange, from: "VK", to: "V3", change: events.ChangeKeyChanged, auto: fromCode,
			refuses: always, fn: fromCode, migrate: migrator[VK, V3](s("VK"), s("V3"))},
		{class: KeyRename, from: "VK", to: "VR", change: events.ChangeKeyRenamed},
		{class: KeyRename, from: "VR", to: "VK", change: events.ChangeKeyRenamed},
	}
	out := map[string][]*transition{}
	for _, t := range ts {
		out[t.from] = append(out[t.from], t)
	}
	return out
}

func add(name string, zero any) mapFn {
	return func(id string, r rec) (string, rec) { r = r.clone(); r[name] = zero; return id, r }
}

func drop(name string) mapFn {
	return func(id string, r rec) (string, rec) { r = r.clone(); delete(r, name); return id, r }
}

func rename(from, to string) mapFn {
	return func(id string, r rec) (string, rec) {
		r = r.clone()
		r[to] = r[from]
		delete(r, from)
		return id, r
	}
}

// convert maps one field's value with f.
func convert(name string, f func(any) any) mapFn {
	return func(id string, r rec) (string, rec) { r = r.clone(); r[name] = f(r[name]); return id, r }
}

// The conversions are the documented rules (docs/evolving.md), written
// here apart from the product's: int → float within ±2^53, float → int
// when integral, text → float when the text is exactly the number's
// shortest form, float → text as that form.
func intToFloat(name string) mapFn {
	return convert(name, func(v any) any { return float64(v.(int64)) })
}

func floatToInt(name string) mapFn {
	return convert(name, func(v any) any { return int64(v.(float64)) })
}

// roundFloat is the application's migration of a float that is not
// integral: rounded.
func roundFloat(name string) mapFn {
	return convert(name, func(v any) any { return int64(math.Round(v.(float64))) })
}

func notIntegral(name string) func(rec) bool {
	return func(r rec) bool { f := r[name].(float64); return f != math.Trunc(f) || math.Abs(f) >= 1<<63 }
}

// numberText reads s as a float when s is exactly its shortest form.
func numberText(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strconv.FormatFloat(f, 'g', -1, 64) != s {
		return 0, false
	}
	return f, true
}

func notNumberText(name string) func(rec) bool {
	return func(r rec) bool { _, ok := numberText(r[name].(string)); return !ok }
}

// textToFloat converts a number's text; the application's migration
// maps any other text to its length in bytes.
func textToFloat(name string) mapFn {
	return convert(name, func(v any) any {
		if f, ok := numberText(v.(string)); ok {
			return f
		}
		return float64(len(v.(string)))
	})
}

func floatToText(name string) mapFn {
	return convert(name, func(v any) any { return strconv.FormatFloat(v.(float64), 'g', -1, 64) })
}

// toCode keys a record by "k" + its id, the id kept in ref.
func toCode(id string, r rec) (string, rec) {
	r = r.clone()
	r["ref"] = id
	return "k" + id, r
}

// fromCode keys it by its id again.
func fromCode(code string, r rec) (string, rec) {
	r = r.clone()
	delete(r, "ref")
	return strings.TrimPrefix(code, "k"), r
}

// always: no record takes the change (another key, a removed entity).
func always(rec) bool { return true }

// The entity toggles: Other added (additive) or removed (refused while it
// has records; no migration maps a removal).
var (
	addOther    = &transition{class: AddEntity, change: events.ChangeEntityAdded, additive: true}
	removeOther = &transition{class: RemoveEntity, change: events.ChangeEntityRemoved, refuses: always}
)

// entity is the entity the transition changes.
func (t *transition) entity() string {
	if t.class == AddEntity || t.class == RemoveEntity {
		return otherEntity
	}
	return itemEntity
}

// refusing are the records of recs that cannot take t, sorted.
func (t *transition) refusing(recs map[string]rec) []string {
	var out []string
	for id, r := range recs {
		if t.refuses != nil && t.refuses(r) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// rewrites counts the records a migration with t.fn rewrites: those that
// cannot take the change, and those it maps otherwise than the store
// would (the others it leaves as they read in the new shape).
func (t *transition) rewrites(recs map[string]rec) int {
	n := 0
	for id, r := range recs {
		if t.refuses(r) {
			n++
			continue
		}
		aid, ar := id, r
		if t.auto != nil {
			aid, ar = t.auto(id, r)
		}
		if fid, fr := t.fn(id, r); fid != aid || !maps.Equal(fr, ar) {
			n++
		}
	}
	return n
}
