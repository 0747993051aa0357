package layout

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

func recInput(fields ...Field) TabSpec {
	s := mustSpecs(fields...)
	spec, _ := s.Tab(InputTabName("Rec"))
	return spec
}

func recSystem(fields ...Field) TabSpec {
	s := mustSpecs(fields...)
	spec, _ := s.Tab(SystemTabName("Rec"))
	return spec
}

func mustSpecs(fields ...Field) *Schema {
	s, err := NewSchema(Entity{Name: "Rec", Fields: append([]Field{{Name: "id", Kind: cell.String, Key: true}}, fields...)})
	if err != nil {
		panic(err)
	}
	return s
}

func header(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = n
	}
	return out
}

func TestMatchHeaderIsExactNamesInOrderThenBlanksOrRetired(t *testing.T) {
	spec := recInput(Field{Name: "notes", Kind: cell.String, Editable: true})
	cases := []struct {
		got  []any
		ok   bool
		keep map[int]string
	}{
		{header("id", "notes", AnchorHeader), true, map[int]string{}},
		{header("id", "notes", AnchorHeader, "", " "), true, map[int]string{}},
		{header("id", "notes", AnchorHeader, "", "name (retired)"), true, map[int]string{4: "name (retired)"}},
		{header("id", "notes", AnchorHeader, "name (retired 2)"), true, map[int]string{3: "name (retired 2)"}},
		{header("id", "notes", AnchorHeader, "Comments"), false, nil},       // a column a person added
		{header("id", "Notes", AnchorHeader), false, nil},                   // a header a person changed
		{header("notes", "id", AnchorHeader), false, nil},                   // moved
		{header("id", "notes"), false, nil},                                 // anchor missing
		{header("id", "name (retired)", "notes", AnchorHeader), false, nil}, // retired inside the layout
	}
	for _, c := range cases {
		m, ok := MatchHeader(spec, c.got)
		if len(c.keep) == 0 {
			c.keep = nil
		}
		if ok != c.ok || (ok && !reflect.DeepEqual(m, c.keep)) {
			t.Errorf("MatchHeader(%v) = %v %v, want %v %v", c.got, m, ok, c.ok, c.keep)
		}
	}
}

func TestValidateHeaderIgnoresRetiredColumnsAfterTheLayout(t *testing.T) {
	spec := recInput(Field{Name: "notes", Kind: cell.String, Editable: true})
	rep, err := ValidateHeader(spec, header("id", "notes", AnchorHeader, "name (retired)"))
	if err != nil || !reflect.DeepEqual(rep.Ignored, []int{3}) {
		t.Fatalf("retired column after the anchor: %+v %v", rep, err)
	}
	if _, err := ValidateHeader(spec, header("id", "name (retired)", "notes", AnchorHeader)); err == nil {
		t.Fatal("a retired header inside the layout was accepted")
	}
}

func TestRetiredNames(t *testing.T) {
	taken := map[string]bool{"name (retired)": true, "name (retired 2)": true}
	if got := RetiredName("name", func(s string) bool { return taken[s] }); got != "name (retired 3)" {
		t.Fatalf("RetiredName = %q", got)
	}
	if RetiredField("name (retired 3)") != "name" || RetiredField("name") != "" || !IsRetired("a b (retired)") {
		t.Fatal("retired header parsing")
	}
}

func keepNone(string) bool { return false }

func TestPlanColumns(t *testing.T) {
	name := Field{Name: "name", Kind: cell.String}
	notes := Field{Name: "notes", Kind: cell.String, Editable: true}
	pop := Field{Name: "pop", Kind: cell.Float}
	same := func(s string) (string, bool) { return s, true }
	t.Run("add a field", func(t *testing.T) {
		p := PlanColumns(recSystem(name, notes), recSystem(name, pop, notes), same, keepNone, keepNone)
		if !reflect.DeepEqual(p.Source, []string{"id", "name", "", "notes", AnchorHeader}) || !p.Changed() || !p.Fill(2) || p.Fill(1) {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("drop a field", func(t *testing.T) {
		follow := func(s string) (string, bool) { return s, s != "name" }
		p := PlanColumns(recSystem(name, notes), recSystem(notes), follow, keepNone, keepNone)
		if !reflect.DeepEqual(p.Source, []string{"id", "notes", AnchorHeader}) || !reflect.DeepEqual(p.Drop, []string{"name"}) {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("retire an edited user column", func(t *testing.T) {
		follow := func(s string) (string, bool) { return s, s != "notes" }
		keep := func(s string) bool { return s == "notes" }
		taken := func(s string) bool { return s == "notes (retired)" }
		tag := Field{Name: "tag", Kind: cell.String, Editable: true}
		p := PlanColumns(recInput(notes), recInput(tag), follow, keep, taken)
		if !reflect.DeepEqual(p.Retire, []string{"notes"}) || !reflect.DeepEqual(p.RetiredAs, []string{"notes (retired 2)"}) ||
			!reflect.DeepEqual(p.Source, []string{"id", "", AnchorHeader}) {
			t.Fatalf("plan %+v", p)
		}
		got := p.Headers(map[int]string{3: "notes (retired)"})
		if !reflect.DeepEqual(got, []string{"id", "tag", AnchorHeader, "notes (retired)", "notes (retired 2)"}) {
			t.Fatalf("headers %v", got)
		}
	})
	t.Run("rename and reorder", func(t *testing.T) {
		follow := func(s string) (string, bool) {
			if s == "name" {
				return "title", true
			}
			return s, true
		}
		title := Field{Name: "title", Kind: cell.String}
		p := PlanColumns(recSystem(name, pop), recSystem(pop, title), follow, keepNone, keepNone)
		if !reflect.DeepEqual(p.Source, []string{"id", "pop", "name", AnchorHeader}) || p.Fill(1) || p.Fill(2) || !p.Changed() {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("retype", func(t *testing.T) {
		p := PlanColumns(recSystem(name), recSystem(Field{Name: "name", Kind: cell.Float}), same, keepNone, keepNone)
		if !p.Fill(1) || !p.Changed() {
			t.Fatalf("plan %+v", p)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		if p := PlanColumns(recSystem(name), recSystem(name), same, keepNone, keepNone); p.Changed() {
			t.Fatalf("plan %+v", p)
		}
	})
}
