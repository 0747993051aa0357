package main

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// families lists the catalogue's families in document order, by the file
// declaring their payload types. A file not listed here becomes a family
// of its own after these, titled from its name.
var families = []struct{ file, title string }{
	{"entity_events.go", "Entity events"},
	{"effect_events.go", "Effect events"},
	{"inbound_events.go", "Inbound events"},
	{"conflict_events.go", "Conflict events and commands"},
	{"lease_events.go", "Lease events"},
	{"sync_events.go", "Sync events"},
}

// family is one group of entries, declared in one file.
type family struct {
	file, title, doc string
	entries          []events.Entry
}

// renderer holds what every section needs.
type renderer struct {
	src     *source
	pkgName string
	anchors map[string]string // event type → anchor
	goTypes map[string]string // payload Go type name → event type
	shared  map[string][]string
	notes   []string // gaps in the doc comments, for the tests to report
}

// render returns the document for cat, with the doc comments of src, and
// notes on what the doc comments leave undocumented.
func render(src *source, cat []events.Entry) ([]byte, []string, error) {
	r := &renderer{src: src, anchors: map[string]string{}, goTypes: map[string]string{}, shared: map[string][]string{}}
	for _, e := range cat {
		ts := src.types[e.Go.Name()]
		if ts == nil {
			return nil, nil, fmt.Errorf("%s: payload type %s not found in the source of %s", e.Type, e.Go.Name(), e.Go.PkgPath())
		}
		if r.structOf(ts) == nil {
			return nil, nil, fmt.Errorf("%s: payload type %s is not a struct in the source", e.Type, e.Go.Name())
		}
		r.anchors[string(e.Type)] = slug(string(e.Type))
		r.goTypes[e.Go.Name()] = string(e.Type)
		if ts.Of != "" {
			r.shared[ts.Of] = append(r.shared[ts.Of], string(e.Type))
		}
		r.pkgName = e.Go.String()[:strings.IndexByte(e.Go.String(), '.')]
	}
	for _, types := range r.shared {
		sort.SliceStable(types, func(i, j int) bool { return r.before(events.Type(types[i]), events.Type(types[j])) })
	}

	var blocks []string
	add := func(b ...string) { blocks = append(blocks, b...) }
	add(r.intro()...)
	add(chainSection()...)
	fams := r.families(cat)
	add("## Contents", r.contents(fams))
	for _, f := range fams {
		add("## " + f.title)
		p := r.prose(nil, "")
		for i, para := range paragraphs(f.doc) {
			if i == 0 {
				// "Entity events: what …" under the heading "Entity events".
				if rest, ok := strings.CutPrefix(para, f.title+": "); ok {
					para = capitalize(rest)
				}
			}
			add(p.paragraph(para))
		}
		for _, e := range f.entries {
			add(r.entry(e)...)
		}
	}
	return []byte(strings.Join(blocks, "\n\n") + "\n"), r.notes, nil
}

// families groups the entries by the file declaring their payload type.
func (r *renderer) families(cat []events.Entry) []*family {
	byFile := map[string]*family{}
	var out []*family
	for _, f := range families {
		fam := &family{file: f.file, title: f.title, doc: r.src.families[f.file]}
		byFile[f.file] = fam
		out = append(out, fam)
	}
	var extra []*family
	for _, e := range cat {
		file := r.src.types[e.Go.Name()].File
		fam := byFile[file]
		if fam == nil {
			name := strings.TrimSuffix(strings.TrimSuffix(file, ".go"), "_events")
			fam = &family{file: file, title: capitalize(strings.ReplaceAll(name, "_", " ")) + " events", doc: r.src.families[file]}
			byFile[file] = fam
			extra = append(extra, fam)
		}
		fam.entries = append(fam.entries, e)
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].file < extra[j].file })
	var kept []*family
	for _, f := range append(out, extra...) {
		if len(f.entries) > 0 {
			sort.SliceStable(f.entries, func(i, j int) bool { return r.before(f.entries[i].Type, f.entries[j].Type) })
			kept = append(kept, f)
		}
	}
	return kept
}

// before orders the entries of a family: in the order their Type
// constants are declared (the life cycle: queued, claimed, applied, …),
// then by type for any the source does not declare as constants.
func (r *renderer) before(a, b events.Type) bool {
	ra, oka := r.src.order[string(a)]
	rb, okb := r.src.order[string(b)]
	switch {
	case oka && okb:
		return ra < rb
	case oka != okb:
		return oka
	}
	return a < b
}

// prose returns the converter for text about the struct type t (may be
// nil) in the section of event type self.
func (r *renderer) prose(t reflect.Type, self string) prose {
	p := prose{idents: map[string]string{}, types: r.anchors, self: self}
	for name, typ := range r.goTypes {
		p.idents[name] = p.link(typ)
	}
	for name := range r.shared {
		p.idents[name] = "`" + r.pkgName + "." + name + "`"
	}
	if t != nil {
		for _, f := range fieldKeys(t) {
			p.idents[f.GoName] = "`" + f.Key + "`"
		}
	}
	return p
}

// structOf returns the struct declaration a payload type is (or is
// defined as).
func (r *renderer) structOf(ts *typeSrc) *typeSrc {
	for seen := 0; ts != nil && seen < 8; seen++ {
		if ts.Fields != nil {
			return ts
		}
		ts = r.src.types[ts.Of]
	}
	return nil
}

func (r *renderer) intro() []string {
	subHeading, subText := subscribing()
	return []string{
		"# Event catalogue",
		"*Generated from the `events` package by `go generate ./events/`: do not edit by hand.*",
		"Every event in a store's log is one of the types below. This catalogue is the contract for " +
			"everyone who reads the log from outside the application: auditors (`hikoutei audit`) and " +
			"NATS subscribers of the event mirror (subject `hikoutei.<store>.events`, which carries each committed " +
			"event's record without its fencing token, signed by the store; `events.DecodeRecord` decodes and " +
			"checks a record, and [the NATS trust model](nats.md#nats-trust-model) says what else a reader verifies). It is generated from " +
			"the catalogue itself (`events.Catalogue()`) and the payload types' doc comments, so it " +
			"describes exactly the build it comes with.",
		"The conflict notifications NATS carries (subjects `hikoutei.<store>.conflict.*`) are a separate " +
			"JSON contract, described in [NATS](nats.md#conflict-notifications); they are not these records.",
		subHeading, subText,
		"## Records",
		"A record is an envelope around one typed payload:",
		table([]string{"Field", "Meaning"}, [][]string{
			{"`seq`", "The global sequence, dense from 1: the log's key, and the mirror's `Nats-Msg-Id`."},
			{"`stream`", "The stream the event belongs to, e.g. `" + events.EntityStream("Airport", "LAX") + "`. Each type below names its stream pattern, where `<…>` stands for a value."},
			{"`version`", "The event's version within its stream, dense from 1."},
			{"`type`", "The catalogue type, e.g. `" + string(events.TypeEntityPersisted) + "`: one of the sections below."},
			{"`schema`", "The schema of the payload as it was written (see [Upcasting](#upcasting))."},
			{"`at`", "The clock reading the decision used, in UTC. The envelope keeps nanoseconds; times inside payloads are milliseconds."},
			{"`epoch`", "The lease epoch of the writer that appended the event."},
			{"`token`", "The fencing token of that writer's lease. The log's record keeps it, but it is never shown: `hikoutei audit` leaves it out, no payload holds it, and the NATS mirror's records leave it empty."},
			{"`commit`", "An id shared by every event of one append batch (one atomic write to the log)."},
			{"`payload`", "The typed body: a canonical map, documented for each type below."},
			{"`link`", "The SHA-256 chain value of the records before this one (see [The hash chain](#the-hash-chain)); records written before the chain have none."},
		}),
		"## Payloads",
		"A payload is a map in the canonical encoding, which gives every value exactly one byte " +
			"string, so that equal payloads hash equal. Its keys are the ones in the tables below and " +
			"its values come from a closed set. The **Type** column reads:",
		table([]string{"Type", "Value"}, [][]string{
			{"string", "Text: valid UTF-8, normalised to NFC."},
			{"integer", "A signed 64-bit integer. *integer (≥ 0)* is never negative."},
			{"boolean", "`true` or `false`."},
			{"time (UTC, ms)", "An instant in UTC, truncated to milliseconds; null when unset."},
			{"canonical value", "Any canonical value: null, boolean, integer, float (64-bit, finite), string, time, list or map."},
			{"map of …", "A map with string keys (NFC, sorted by their UTF-8 bytes) and values of the type named; null when unset."},
			{"list of maps", "A list whose items are maps, documented in a table of their own below the payload's; null when unset."},
		}),
		"The **Present** column says when a key is in a payload:",
		"- **always**: in every payload this build writes. A reader also accepts a payload without it, and reads the value as empty.\n" +
			"- **always, never empty**: a required key: a payload where it is missing or empty is malformed.\n" +
			"- **when non-empty**: left out when the value is empty (`\"\"`, 0, `false` or null).",
		"## Errors",
		fmt.Sprintf("An event that cannot be read as its catalogue type is an error, never a guess. A record "+
			"whose type is not in this catalogue, or whose schema is newer than the one this build writes "+
			"(a log written by a newer build, or foreign bytes), fails with `%s` (`events.ErrUnknownEventType`). "+
			"A payload without its type's shape (an unknown key, a value of the wrong type, a missing or "+
			"empty required key, a failed upcast) fails with `%s` (`events.ErrMalformedPayload`). Both "+
			"errors are a `*events.PayloadError`, which names the record's seq and type. Record bytes that "+
			"are torn or fail their checksum fail with `%s` (`*events.CorruptRecordError`).",
			events.ErrUnknownEventType, events.ErrMalformedPayload, events.ErrCorruptRecord),
		"## Upcasting",
		"Each type has a current schema: the one this build writes, given in its section. A record " +
			"written at an older schema is upcast when it is read: the type's upcast steps rewrite its " +
			"payload one schema at a time (1 to 2, 2 to 3, …) up to the current schema, and only then is " +
			"it decoded. Upcasts are pure and deterministic, so a replay always sees the same payloads, " +
			"and the stored bytes keep the schema they were written at. Readers (`hikoutei audit`, " +
			"replay, `events.DecodeRecord`) therefore always see the current schema documented here; each " +
			"section lists the schemas its type is upcast from and what each step does.",
		fmt.Sprintf("A record may leave out what the log already holds: an `%s` at schema 2 whose "+
			"values are its entity's `%s` fields (in the same commit) stores `values_of` "+
			"(that event's stream version) instead of `values`. `Log.ReadFrom` and `Log.ReadStream` fill "+
			"the values in (through the stream links or index, or its segment when it is sealed, when the read starts past the persisted event), and "+
			"a reader of records shipped elsewhere, in log order, uses `events.ValueResolver` (the mirror "+
			"readers do). `events.MarshalRecord` of a read event gives back the stored bytes. Logs written "+
			"before schema 2 keep their values inline and read as before. Likewise a dispatch settles its "+
			"effects with one `%s` and one `%s` per 256 effects (`aggregates.MaxBatchItems`) on the "+
			"spreadsheet's dispatch stream instead of one `%s` and one `%s` per effect (still read, and "+
			"still written for an effect decided twice in one commit); folds treat a batch as its items (`events.Batch.Each`). From schema 2 a batch "+
			"whose effect ids are all `fx` and 16 hex digits (and, applied, whose written hashes are 16 "+
			"hex digits; claimed, whose attempts are equal) stores them as one `packed` string (the bytes "+
			"they spell, sorted by id, in unpadded base64url) and a claim's one `attempt`; reading fills "+
			"`attempts` or `written` back in. Batches of schema 1 keep their maps and read as before.",
			events.TypeEffectQueued, events.TypeEntityPersisted, events.TypeEffectsClaimed, events.TypeEffectsApplied,
			events.TypeEffectClaimed, events.TypeEffectApplied),
		fmt.Sprintf("A record also leaves out the keys reading it derives from the rest of the same "+
			"record, its stream included, and only when their values equal that derivation: an `%s` at "+
			"schema 3 leaves out `binding` (its stream `outbox/<binding>` names it), a null `values` (an "+
			"absent key reads as null), `stream_sequence` (the "+
			"record's stream version), `effect_id` (from "+
			"`binding` and `stream_sequence`), `anchor` (when it is the `id`) and `payload_hash` (from "+
			"`op`, `tab`, `anchor` and `values`; for `values_of` once the values are filled in); an `%s` "+
			"at schema 3 leaves out `entity` and `id` (its stream `entity/<Entity>/<id>` names them, for an "+
			"entity name without a slash), `created` (true exactly at stream version 1) and the `revisions` "+
			"of a first create (every field at revision 1). Decoding fills them in, so a read event equals the appended one and marshals to "+
			"the stored bytes; a key present in a record is kept as it is.",
			events.TypeEffectQueued, events.TypeEntityPersisted),
	}
}

// contents is the table of contents: each family and its types, with the
// first sentence of each type's doc.
func (r *renderer) contents(fams []*family) string {
	var b strings.Builder
	for _, f := range fams {
		fmt.Fprintf(&b, "- [%s](#%s)\n", f.title, slug(f.title))
		for _, e := range f.entries {
			fmt.Fprintf(&b, "  - [`%s`](#%s)", e.Type, r.anchors[string(e.Type)])
			ts := r.src.types[e.Go.Name()]
			if text := r.typeDoc(ts); text != "" {
				p := r.prose(e.Go, string(e.Type))
				summary := stripSubject(firstSentence(paragraphs(text)[0]), e.Go.Name(), true)
				fmt.Fprintf(&b, ": %s", p.paragraph(summary))
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// typeDoc is the doc of a payload type, or of the struct it is defined as
// when it has none.
func (r *renderer) typeDoc(ts *typeSrc) string {
	for seen := 0; ts != nil && seen < 8; seen++ {
		if ts.Doc != "" {
			return ts.Doc
		}
		ts = r.src.types[ts.Of]
	}
	return ""
}

// entry renders the section of one event type.
func (r *renderer) entry(e events.Entry) []string {
	typ := string(e.Type)
	ts := r.src.types[e.Go.Name()]
	st := r.structOf(ts)
	p := r.prose(e.Go, typ)
	out := []string{"### `" + typ + "`"}
	doc := r.typeDoc(ts)
	if doc == "" {
		r.note("%s: payload type %s has no doc comment", typ, e.Go.Name())
	}
	for _, para := range paragraphs(doc) {
		out = append(out, p.paragraph(para))
	}

	schema := strconv.FormatUint(uint64(e.Schema), 10)
	if len(e.Upcasts) > 0 {
		schema += " (upcast from " + joinSchemas(e.Upcasts) + ")"
	}
	goType := "`" + e.Go.String() + "`"
	if st != ts {
		goType += ", defined as `" + r.pkgName + "." + st.Name + "`"
		var others []string
		for _, t := range r.shared[st.Name] {
			if t != typ {
				others = append(others, p.link(t))
			}
		}
		if n := len(others); n > 0 {
			list := others[0]
			if n > 1 {
				list = strings.Join(others[:n-1], ", ") + " and " + others[n-1]
			}
			goType += " (also the payload of " + list + ")"
		}
	}
	out = append(out, "- **Stream:** `"+e.Stream+"`\n- **Schema:** "+schema+"\n- **Go type:** "+goType)
	if st != ts && ts.Doc != "" && st.Doc != "" {
		// The named type has its own doc (shown above): the shared
		// struct's doc says what the types sharing it have in common. Its
		// "See X and Y." is what the Go type line already says.
		for _, para := range paragraphs(st.Doc) {
			if para = dropSee(para); para != "" {
				out = append(out, p.paragraph(para))
			}
		}
	}

	out = append(out, "**Payload:**", r.fieldTable(typ, e.Go, st, topFields(e)))
	out = append(out, r.itemTables(typ, "", e.Go)...)

	if len(e.Upcasts) > 0 {
		var b strings.Builder
		steps := append([]uint32(nil), e.Upcasts...)
		sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
		for _, from := range steps {
			fmt.Fprintf(&b, "- **From schema %d to %d:**", from, from+1)
			text := r.src.upcasts[e.Go.Name()][from]
			if text == "" {
				r.note("%s: the upcast from schema %d has no doc comment", typ, from)
			}
			for _, para := range paragraphs(text) {
				b.WriteString(" " + capitalize(p.paragraph(para)))
			}
			b.WriteString("\n")
		}
		out = append(out, "**Upcasts:**", strings.TrimSuffix(b.String(), "\n"))
	}
	return out
}

func joinSchemas(s []uint32) string {
	s = append([]uint32(nil), s...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	parts := make([]string, len(s))
	for i, n := range s {
		parts[i] = strconv.FormatUint(uint64(n), 10)
	}
	return strings.Join(parts, ", ")
}

// field is one key of a payload or of a list item.
type field struct {
	events.Field
	Required bool
}

// topFields are an entry's fields as the catalogue reports them, with
// the required flag from their tags.
func topFields(e events.Entry) []field {
	byName := map[string]field{}
	for _, f := range fieldKeys(e.Go) {
		byName[f.GoName] = f
	}
	out := make([]field, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = field{Field: f, Required: byName[f.GoName].Required}
	}
	return out
}

// fieldKeys reads the canon tags of struct type t the way the events
// package's codec does (for list items, which the catalogue does not
// list, and for the required flag).
func fieldKeys(t reflect.Type) []field {
	if t == nil {
		return nil
	}
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		parts := strings.Split(sf.Tag.Get("canon"), ",")
		f := field{Field: events.Field{Key: parts[0], GoName: sf.Name, Go: sf.Type}}
		for _, opt := range parts[1:] {
			f.OmitEmpty = f.OmitEmpty || opt == "omitempty"
			f.Required = f.Required || opt == "required"
		}
		out = append(out, f)
	}
	return out
}

// fieldTable renders the fields of struct st (reflect type t) as a table.
func (r *renderer) fieldTable(typ string, t reflect.Type, st *typeSrc, fields []field) string {
	p := r.prose(t, typ)
	rows := make([][]string, 0, len(fields))
	for _, f := range fields {
		rows = append(rows, []string{"`" + f.Key + "`", typeText(f.Go), presence(f), r.meaning(p, typ, st, f)})
	}
	return table([]string{"Key", "Type", "Present", "Meaning"}, rows)
}

// itemTables renders a table for the items of each list-of-struct field
// of t, and of their own lists, depth first.
func (r *renderer) itemTables(typ, path string, t reflect.Type) []string {
	var out []string
	for _, f := range fieldKeys(t) {
		if f.Go.Kind() != reflect.Slice || f.Go.Elem().Kind() != reflect.Struct {
			continue
		}
		elem := f.Go.Elem()
		key := path + f.Key
		st := r.src.types[elem.Name()]
		if st == nil || st.Fields == nil {
			r.note("%s: list item type %s not found in the source", typ, elem.Name())
			st = &typeSrc{Name: elem.Name(), Fields: map[string]string{}}
		}
		intro := "**Each item of `" + key + "`:**"
		if text := st.Doc; text != "" {
			p := r.prose(elem, typ)
			var paras []string
			for _, para := range paragraphs(text) {
				paras = append(paras, p.paragraph(para))
			}
			if rest, ok := strings.CutPrefix(paragraphs(text)[0], elem.Name()+" is "); ok {
				paras[0] = "**Each item of `" + key + "`** is " + p.paragraph(rest)
				intro = ""
			}
			if intro != "" {
				out = append(out, intro)
			}
			out = append(out, paras...)
		} else {
			out = append(out, intro)
		}
		out = append(out, r.fieldTable(typ, elem, st, fieldKeys(elem)))
		out = append(out, r.itemTables(typ, key+"[].", elem)...)
	}
	return out
}

// meaning is a field's doc, followed by the values of its named string
// type (with the type's own doc when the field has none).
func (r *renderer) meaning(p prose, typ string, st *typeSrc, f field) string {
	var parts []string
	if text := st.Fields[f.GoName]; text != "" {
		parts = append(parts, sentence(p.paragraph(stripFieldName(strings.Join(paragraphs(text), " "), f.GoName))))
	}
	if t := f.Go; t.Kind() == reflect.String && t.PkgPath() != "" {
		if len(parts) == 0 {
			if ts := r.src.types[t.Name()]; ts != nil && ts.Doc != "" {
				text := stripSubject(stripSubject(firstSentence(paragraphs(ts.Doc)[0]), t.Name(), false), t.Name(), true)
				parts = append(parts, capitalize(p.paragraph(text)))
			}
		}
		if vals := r.src.enums[t.Name()]; len(vals) > 0 {
			parts = append(parts, enumText(p, vals))
		}
	}
	if len(parts) == 0 {
		r.note("%s: field %s (%s) has no doc comment", typ, f.Key, f.GoName)
		return "*Undocumented.*"
	}
	return strings.Join(parts, " ")
}

// enumText lists the values of a named string type, with their docs.
func enumText(p prose, vals []enumValue) string {
	var items []string
	documented := false
	for _, v := range vals {
		item := "`" + v.Value + "`"
		if v.Doc != "" {
			documented = true
			text := strings.TrimSpace(strings.TrimPrefix(stripSubject(v.Doc, v.Name+":", true), v.Name+":"))
			item += " (" + strings.TrimSuffix(p.paragraph(text), ".") + ")"
		}
		items = append(items, item)
	}
	last := len(items) - 1
	if last == 0 {
		return "Always " + items[0] + "."
	}
	sep := ", "
	if documented {
		sep = "; "
	}
	return "One of " + strings.Join(items[:last], sep) + " or " + items[last] + "."
}

// typeText is a field's type as a reader of payloads sees it.
func typeText(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int64:
		return "integer"
	case reflect.Uint64:
		return "integer (≥ 0)"
	case reflect.Interface:
		return "canonical value"
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return "time (UTC, ms)"
		}
	case reflect.Map:
		switch t.Elem().Kind() {
		case reflect.String:
			return "map of strings"
		case reflect.Int64:
			return "map of integers"
		case reflect.Uint64:
			return "map of integers (≥ 0)"
		case reflect.Interface:
			return "map of canonical values"
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "list of maps (below)"
		}
	}
	return t.String() // not a type the codec maps: the catalogue refuses it at init
}

func presence(f field) string {
	switch {
	case f.Required:
		return "always, never empty"
	case f.OmitEmpty:
		return "when non-empty"
	}
	return "always"
}

// table renders a markdown table.
func table(head []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + cell(c) + " |")
		}
		b.WriteString("\n")
	}
	line(head)
	sep := make([]string, len(head))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, row := range rows {
		line(row)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (r *renderer) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}
