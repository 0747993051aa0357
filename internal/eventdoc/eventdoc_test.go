package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// rendered renders the document once per test binary.
var rendered = struct {
	doc   []byte
	notes []string
	dir   string // module directory
	err   error
}{}

func renderOnce(t *testing.T) ([]byte, []string, string) {
	t.Helper()
	if rendered.doc == nil && rendered.err == nil {
		src, err := loadSource(eventsPkg)
		if err == nil {
			rendered.dir = src.moduleDir
			rendered.doc, rendered.notes, err = render(src, events.Catalogue())
		}
		rendered.err = err
	}
	if rendered.err != nil {
		t.Fatal(rendered.err)
	}
	return rendered.doc, rendered.notes, rendered.dir
}

// TestDocsEventsMDIsFresh fails when docs/events.md is not what the
// generator renders for this build's catalogue and doc comments.
func TestDocsEventsMDIsFresh(t *testing.T) {
	doc, _, dir := renderOnce(t)
	path := filepath.Join(dir, "docs", "events.md")
	onDisk, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("docs/events.md is stale: run go generate ./events/ (%v)", err)
	}
	if !bytes.Equal(onDisk, doc) {
		t.Fatalf("docs/events.md is stale: run go generate ./events/ (%s)", firstDiff(onDisk, doc))
	}
}

// firstDiff describes the first line where the file and the rendering differ.
func firstDiff(file, want []byte) string {
	a, b := strings.Split(string(file), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var la, lb string
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb || i >= len(a) || i >= len(b) {
			return fmt.Sprintf("line %d is\n\t%q\nwant\n\t%q", i+1, la, lb)
		}
	}
	return "no difference"
}

// TestRenderCoversCatalogue: every catalogue type has a section and a
// contents entry, and every key of its payload (and of its list items)
// has a row in that section's tables, with the type as read.
func TestRenderCoversCatalogue(t *testing.T) {
	doc, _, _ := renderOnce(t)
	sections := sectionsOf(string(doc))
	cat := events.Catalogue()
	if len(cat) == 0 {
		t.Fatal("empty catalogue")
	}
	for _, e := range cat {
		sec, ok := sections[string(e.Type)]
		if !ok {
			t.Errorf("%s: no section", e.Type)
			continue
		}
		if !strings.Contains(string(doc), "](#"+slug(string(e.Type))+")") {
			t.Errorf("%s: not in the contents", e.Type)
		}
		for _, want := range []string{"- **Stream:** `" + e.Stream + "`", fmt.Sprintf("- **Schema:** %d", e.Schema)} {
			if !strings.Contains(sec, want) {
				t.Errorf("%s: section lacks %q", e.Type, want)
			}
		}
		for _, from := range e.Upcasts {
			if !strings.Contains(sec, fmt.Sprintf("**From schema %d to %d:**", from, from+1)) {
				t.Errorf("%s: section lacks the upcast from schema %d", e.Type, from)
			}
		}
		checkFields(t, string(e.Type), sec, e.Go, "")
	}
	if len(sections) != len(cat) {
		t.Errorf("%d event sections for %d catalogue entries", len(sections), len(cat))
	}
}

func checkFields(t *testing.T, typ, sec string, st reflect.Type, path string) {
	t.Helper()
	for _, f := range fieldKeys(st) {
		row := "| `" + f.Key + "` | " + cell(typeText(f.Go)) + " | " + presence(f) + " | "
		if !strings.Contains(sec, row) {
			t.Errorf("%s: no row for %s%s (want a line containing %q)", typ, path, f.Key, row)
		}
		if f.Go.Kind() == reflect.Slice && f.Go.Elem().Kind() == reflect.Struct {
			if !strings.Contains(sec, "Each item of `"+path+f.Key+"`") {
				t.Errorf("%s: no table for the items of %s%s", typ, path, f.Key)
			}
			checkFields(t, typ, sec, f.Go.Elem(), path+f.Key+"[].")
		}
	}
}

// sectionsOf splits the document into its event sections by type.
func sectionsOf(doc string) map[string]string {
	out := map[string]string{}
	var name string
	var b strings.Builder
	flush := func() {
		if name != "" {
			out[name] = b.String()
		}
		name = ""
		b.Reset()
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "#") {
			flush()
			if typ, ok := strings.CutPrefix(line, "### `"); ok {
				name = strings.TrimSuffix(typ, "`")
			}
		}
		b.WriteString(line + "\n")
	}
	flush()
	return out
}

// TestRenderIsCleanMarkdown: the document is deterministic, has no
// trailing spaces or runs of blank lines, every table row has its
// header's cell count, and every in-document link has its heading.
func TestRenderIsCleanMarkdown(t *testing.T) {
	doc, _, _ := renderOnce(t)
	src, err := loadSource(eventsPkg)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := render(src, events.Catalogue())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, again) {
		t.Errorf("two renderings differ: %s", firstDiff(doc, again))
	}
	text := string(doc)
	if !strings.HasSuffix(text, "\n") || strings.HasSuffix(text, "\n\n") {
		t.Error("the document must end with exactly one newline")
	}
	if strings.Contains(text, "\n\n\n") {
		t.Error("the document has a run of blank lines")
	}
	headings := map[string]bool{}
	cells := 0
	for i, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if strings.TrimRight(line, " \t") != line || strings.Contains(line, "\t") {
			t.Errorf("line %d has a tab or trailing space: %q", i+1, line)
		}
		if h := strings.TrimLeft(line, "#"); h != line && strings.HasPrefix(h, " ") {
			headings[slug(strings.ReplaceAll(strings.TrimSpace(h), "`", ""))] = true
		}
		if !strings.HasPrefix(line, "|") {
			cells = 0
			continue
		}
		n := len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)) - 1
		if cells == 0 {
			cells = n
		} else if n != cells {
			t.Errorf("line %d: %d cells in a table of %d: %q", i+1, n, cells, line)
		}
	}
	for _, m := range regexp.MustCompile(`\]\(#([^)]*)\)`).FindAllStringSubmatch(text, -1) {
		if !headings[m[1]] {
			t.Errorf("link to #%s, which no heading has", m[1])
		}
	}
}

// TestDocCommentGaps lists (go test -v) what the events package's doc
// comments leave undocumented; the document shows such a field as
// "Undocumented". It fails only if the list is not what the document shows.
func TestDocCommentGaps(t *testing.T) {
	doc, notes, _ := renderOnce(t)
	fields := 0
	for _, n := range notes {
		t.Log(n)
		if strings.Contains(n, ": field ") {
			fields++
		}
	}
	if got := strings.Count(string(doc), "*Undocumented.*"); got != fields {
		t.Errorf("the document shows %d undocumented fields, the notes list %d", got, fields)
	}
}

// TestFieldKeysMatchCatalogue: the tag reading used for list items and
// the required flag agrees with the catalogue on every payload.
func TestFieldKeysMatchCatalogue(t *testing.T) {
	for _, e := range events.Catalogue() {
		got := fieldKeys(e.Go)
		if len(got) != len(e.Fields) {
			t.Errorf("%s: %d tagged fields, catalogue has %d", e.Type, len(got), len(e.Fields))
			continue
		}
		for i, f := range e.Fields {
			if g := got[i]; g.Key != f.Key || g.GoName != f.GoName || g.OmitEmpty != f.OmitEmpty || g.Go != f.Go {
				t.Errorf("%s: field %d read as %+v, catalogue has %+v", e.Type, i, g.Field, f)
			}
		}
	}
}

// TestRenderNeedsTheSource: a catalogue type missing from the parsed
// source is an error, not a section without docs.
func TestRenderNeedsTheSource(t *testing.T) {
	src := &source{types: map[string]*typeSrc{}, enums: map[string][]enumValue{}, families: map[string]string{}, order: map[string]int{}, upcasts: map[string]map[uint32]string{}}
	if _, _, err := render(src, events.Catalogue()); err == nil || !strings.Contains(err.Error(), "not found in the source") {
		t.Fatalf("render with an empty source: %v", err)
	}
}

func TestProse(t *testing.T) {
	// Built from the constants: events/literal_test.go forbids spelling a
	// catalogue type in a string literal, tests included.
	queued, failed := string(events.TypeEffectQueued), string(events.TypeEffectFailed)
	p := prose{
		idents: map[string]string{"RetryAt": "`retry_at`", "EffectQueued": "[`" + queued + "`](#" + slug(queued) + ")"},
		types:  map[string]string{queued: slug(queued), failed: slug(failed)},
		self:   failed,
	}
	for _, c := range []struct{ in, want string }{
		{"back on the retry\npath at RetryAt.", "back on the retry path at `retry_at`."},
		{`Via is "dispatch" or "probe".`, "Via is `dispatch` or `probe`."},
		{`Stream "entity/<Entity>/<id>".`, "Stream `entity/<Entity>/<id>`."},
		{`By ("" when none)`, "By (`\"\"` when none)"},
		{`a "quoted phrase" and x<y`, `a "quoted phrase" and x&lt;y`},
		{queued + " comes first; " + failed + " is this one.", "[`" + queued + "`](#" + slug(queued) + ") comes first; `" + failed + "` is this one."},
		{`"` + queued + `" quoted`, "[`" + queued + "`](#" + slug(queued) + ") quoted"},
		{"See EffectQueued, not xEffectQueued or 2RetryAt.", "See [`" + queued + "`](#" + slug(queued) + "), not xEffectQueued or 2RetryAt."},
		{"lease.toml and " + queued + ".x stay", "lease.toml and " + queued + ".x stay"},
	} {
		if got := p.paragraph(c.in); got != c.want {
			t.Errorf("paragraph(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestStripFieldName(t *testing.T) {
	for _, c := range []struct{ in, name, want string }{
		{"RetryAt is when it is due.", "RetryAt", "When it is due."},
		{"Fields holds the values.", "Fields", "Holds the values."},
		{"Entity and ID name the entity.", "Entity", "Entity and ID name the entity."},
		{"ExpectedHash, when set, is the hash.", "ExpectedHash", "ExpectedHash, when set, is the hash."},
		{"Op Op is odd.", "Op", "Op Op is odd."},
	} {
		if got := stripFieldName(c.in, c.name); got != c.want {
			t.Errorf("stripFieldName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		string(events.TypeAckRequested): "commandacknowledge_systemrequested",
		"Conflict events and commands":  "conflict-events-and-commands",
	} {
		if got := slug(in); got != want {
			t.Errorf("slug(%q) = %q, want %q", in, got, want)
		}
	}
}
