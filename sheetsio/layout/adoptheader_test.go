package layout

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestNormalizeHeaderForgivesCaseAndSpacing(t *testing.T) {
	for in, want := range map[string]string{
		"last_checked": "last_checked", "Last  Checked": "last_checked", "LAST-CHECKED": "last_checked",
		" last checked ": "last_checked", "last\t_ -checked": "last_checked", "__id__": "id", "IATA": "iata",
		"Stra\u00dfe": "strasse", "Cafe\u0301": "café", "": "", " - ": "", "lastchecked": "lastchecked",
	} {
		if got := NormalizeHeader(in); got != want {
			t.Errorf("NormalizeHeader(%q) = %q, want %q", in, got, want)
		}
	}
}

// mapped is a HeaderMap as field → column letter, plus the hows.
func mapped(m HeaderMap) (map[string]string, []string) {
	out := map[string]string{}
	var hows []string
	for f, i := range m.Field {
		out[f] = m.Columns[i].Letter
	}
	for _, c := range m.Columns {
		hows = append(hows, c.How)
	}
	return out, hows
}

// TestMapHeaderMatchesRulesAndFailsClosed: headers map by their normal
// form, explicit rules win, unknown and unnamed columns are reported,
// and every ambiguity (C05) or missing key fails with a typed error.
func TestMapHeaderMatchesRulesAndFailsClosed(t *testing.T) {
	fields := []string{"name", "last_checked", "altitude", "notes"}
	cases := []struct {
		name    string
		header  []string
		rules   map[string]string
		want    map[string]string
		hows    []string
		missing []string
		err     error
	}{
		{name: "by header", header: []string{"ID", "Name", "Last Checked", "ALTITUDE", "notes"},
			want: map[string]string{"id": "A", "name": "B", "last_checked": "C", "altitude": "D", "notes": "E"},
			hows: []string{"header", "header", "header", "header", "header"}},
		{name: "unknown, unnamed and missing", header: []string{"Comments", "id", "", "name"},
			want: map[string]string{"id": "B", "name": "D"}, hows: []string{"unknown", "header", "unnamed", "header"},
			missing: []string{"last_checked", "altitude", "notes"}},
		{name: "a rule wins over the header", header: []string{"id", "name", "Full Name"}, rules: map[string]string{"full name": "name"},
			want: map[string]string{"id": "A", "name": "C"}, hows: []string{"header", "unknown", "map"}, missing: []string{"last_checked", "altitude", "notes"}},
		{name: "a rule sets a column aside", header: []string{"id", "notes"}, rules: map[string]string{"Notes": "-"},
			want: map[string]string{"id": "A"}, hows: []string{"header", "ignored"}, missing: fields},
		{name: "a rule names the key", header: []string{"Code", "name"}, rules: map[string]string{"code": "ID"},
			want: map[string]string{"id": "A", "name": "B"}, hows: []string{"map", "header"}, missing: []string{"last_checked", "altitude", "notes"}},
		{name: "C05 duplicate header", header: []string{"id", "name", "Name "}, err: ErrAdoptHeaderDuplicate},
		{name: "C05 duplicates by normal form", header: []string{"id", "last checked", "Last_Checked"}, err: ErrAdoptHeaderDuplicate},
		{name: "a rule on a duplicated header", header: []string{"id", "x", "X"}, rules: map[string]string{"x": "name"}, err: ErrAdoptHeaderDuplicate},
		{name: "duplicated unknown headers are only unknown", header: []string{"id", "extra", "Extra"},
			want: map[string]string{"id": "A"}, hows: []string{"header", "unknown", "unknown"}, missing: fields},
		{name: "no key column", header: []string{"name", "notes"}, err: ErrAdoptKeyColumnMissing},
		{name: "empty tab", header: nil, err: ErrAdoptKeyColumnMissing},
		{name: "a rule names no column", header: []string{"id"}, rules: map[string]string{"nope": "name"}, err: ErrAdoptMapInvalid},
		{name: "a rule names no field", header: []string{"id", "x"}, rules: map[string]string{"x": "nope"}, err: ErrAdoptMapInvalid},
		{name: "a field given twice", header: []string{"id", "x", "y"}, rules: map[string]string{"x": "name", "y": "name"}, err: ErrAdoptMapInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := MapHeader(c.header, "id", fields, c.rules)
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("err = %v, want %v", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, hows := mapped(m)
			if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(hows, c.hows) || !reflect.DeepEqual(m.Missing, c.missing) {
				t.Fatalf("got %v %v missing %v; want %v %v missing %v", got, hows, m.Missing, c.want, c.hows, c.missing)
			}
		})
	}
}

// TestMapHeaderErrorsNameNoHeaderText: a header is a person's text (it
// may be pasted data): errors name columns by letter, never the text.
func TestMapHeaderErrorsNameNoHeaderText(t *testing.T) {
	_, err := MapHeader([]string{"id", "secret value", "Secret-Value"}, "id", []string{"secret_value"}, nil)
	if !errors.Is(err, ErrAdoptHeaderDuplicate) || strings.Contains(strings.ToLower(err.Error()), "secret value") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzMapHeader: whatever the header and rules, MapHeader never panics,
// is deterministic, maps each field to at most one column and each
// column to at most one field, maps the key when it succeeds, and maps a
// column by header only when its normal form is the field's.
func FuzzMapHeader(f *testing.F) {
	f.Add("ID\tName\tLast Checked\tnotes", "")
	f.Add("id\tname\tName", "")
	f.Add("code\t\tname\tx", "code=id,x=-")
	f.Add("id\tA\ta", "a=notes")
	f.Add("  \t_id_\t-", "")
	f.Fuzz(func(t *testing.T, header, rules string) {
		fields := []string{"name", "last_checked", "notes", "a_b", "a__b"}
		explicit := map[string]string{}
		for _, r := range strings.Split(rules, ",") {
			if h, fl, ok := strings.Cut(r, "="); ok {
				explicit[h] = fl
			}
		}
		cols := strings.Split(header, "\t")
		m, err := MapHeader(cols, "id", fields, explicit)
		m2, err2 := MapHeader(cols, "id", fields, explicit)
		if (err == nil) != (err2 == nil) || !reflect.DeepEqual(m, m2) {
			t.Fatalf("not deterministic: %v / %v", err, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrAdoptHeaderDuplicate) && !errors.Is(err, ErrAdoptKeyColumnMissing) && !errors.Is(err, ErrAdoptMapInvalid) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		checkMap(t, m, cols, append([]string{"id"}, fields...))
	})
}

func checkMap(t *testing.T, m HeaderMap, cols []string, declared []string) {
	t.Helper()
	if _, ok := m.Field["id"]; !ok || len(m.Columns) != len(cols) {
		t.Fatalf("key unmapped or columns lost: %+v", m)
	}
	seen := map[int]bool{}
	for f, i := range m.Field {
		c := m.Columns[i]
		if seen[i] || c.Field != f {
			t.Fatalf("column %d holds %q and the map says %q", i, c.Field, f)
		}
		seen[i] = true
		if c.How == MappedByHeader && NormalizeHeader(c.Header) != NormalizeHeader(f) {
			t.Fatalf("column %q mapped to %q by header", c.Header, f)
		}
	}
	for i, c := range m.Columns {
		if (c.Field != "") != seen[i] {
			t.Fatalf("column %d says field %q but the map disagrees", i, c.Field)
		}
	}
	if len(m.Missing)+len(m.Field) != len(declared) {
		t.Fatalf("missing %v + mapped %d != %d declared", m.Missing, len(m.Field), len(declared))
	}
}
