package layout

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

func airport() Entity {
	return Entity{Name: "Airport", Fields: []Field{
		{Name: "id", Kind: cell.String, Key: true},
		{Name: "name", Kind: cell.String, Editable: true},
		{Name: "elevation", Kind: cell.Int},
		{Name: "status", Kind: cell.String, Editable: true},
	}}
}

func mustSchema(t *testing.T, es ...Entity) *Schema {
	t.Helper()
	s, err := NewSchema(es...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSchemaTabs(t *testing.T) {
	s := mustSchema(t, airport())
	want := []string{"Airport_Input", "Airport_System", ConflictsTab, AuthorityTab, ReceiptsTab}
	if got := s.TabNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("tabs = %v, want %v", got, want)
	}
	in, _ := s.Tab("Airport_Input")
	if got := in.Headers(); !reflect.DeepEqual(got, []string{"id", "name", "status", AnchorHeader}) {
		t.Fatalf("input headers = %v", got)
	}
	if in.Anchor != 3 || in.Role != RoleInput {
		t.Fatalf("input spec = %+v", in)
	}
	sys, _ := s.Tab("Airport_System")
	if sys.Anchor != 4 || sys.Headers()[4] != AnchorHeader {
		t.Fatalf("system spec = %+v", sys)
	}
	for _, n := range []string{ReceiptsTab, AuthorityTab} {
		if tab, _ := s.Tab(n); !tab.Hidden {
			t.Fatalf("%s must be hidden", n)
		}
	}
}

func TestSchemaRejects(t *testing.T) {
	bad := []Entity{
		{Name: "", Fields: []Field{{Name: "id", Kind: cell.String, Key: true}}},
		{Name: "X", Fields: []Field{{Name: "id", Kind: cell.String}}},
		{Name: "X", Fields: []Field{{Name: "id", Kind: cell.String, Key: true}, {Name: "id", Kind: cell.Int}}},
		{Name: "X", Fields: []Field{{Name: AnchorHeader, Kind: cell.String, Key: true}}},
		{Name: "X", Fields: []Field{{Name: "id", Kind: "", Key: true}}},
	}
	for _, e := range bad {
		if _, err := NewSchema(e); !errors.Is(err, ErrInvalidSchema) {
			t.Fatalf("NewSchema(%+v) err = %v", e, err)
		}
	}
	if _, err := NewSchema(airport(), airport()); !errors.Is(err, ErrInvalidSchema) {
		t.Fatalf("duplicate entity accepted: %v", err)
	}
}

func row(vals ...any) []any { return vals }

func issueCodes(t *testing.T, err error) map[string]string {
	t.Helper()
	var he *HeaderError
	if !errors.As(err, &he) || !errors.Is(err, ErrHeaderDrift) {
		t.Fatalf("want *HeaderError, got %v", err)
	}
	out := map[string]string{}
	for _, is := range he.Issues {
		out[is.Header] = is.Code
	}
	return out
}

func statusSpec() TabSpec {
	return TabSpec{Name: "T", Columns: []cell.Column{{Name: "id", Kind: cell.String, Key: true}, {Name: "status", Kind: cell.String}}, Anchor: -1}
}

func TestC05_DuplicateHeaderBlocks(t *testing.T) {
	_, err := ValidateHeader(statusSpec(), row("id", "status", "status"))
	codes := issueCodes(t, err)
	if codes["status"] != IssueDuplicated || len(codes) != 1 {
		t.Fatalf("issues = %v", codes)
	}
	var he *HeaderError
	errors.As(err, &he)
	if !reflect.DeepEqual(he.Issues[0].Columns, []int{1, 2}) {
		t.Fatalf("duplicate positions = %v", he.Issues[0].Columns)
	}
}

func TestC05_BlankExtraColumnsIgnoredAndReported(t *testing.T) {
	spec := TabSpec{Name: "T", Columns: []cell.Column{{Name: "id", Kind: cell.String}, {Name: "name", Kind: cell.String}}, Anchor: -1}
	rep, err := ValidateHeader(spec, row("id", "name", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Width != 2 || !reflect.DeepEqual(rep.Ignored, []int{2, 3}) {
		t.Fatalf("report = %+v", rep)
	}
	// A stray "x" in F5: rows start at sheet row 2.
	rows := [][]any{{"1", "a"}, {"2", "b"}, {"3", "c"}, {"4", "d", "", "", "", "x"}}
	if got := StrayCells(rows, rep.Width, 2); !reflect.DeepEqual(got, []Stray{{Row: 5, Column: 5}}) {
		t.Fatalf("stray = %+v", got)
	}
}

func TestHeaderDriftKinds(t *testing.T) {
	spec := statusSpec()
	cases := []struct {
		got  []any
		want map[string]string
	}{
		{row("id"), map[string]string{"status": IssueMissing}},
		{row("status", "id"), map[string]string{"status": IssueMoved, "id": IssueMoved}},
		{row("id", "", "status"), map[string]string{"status": IssueMoved}},
		{row("id", "status", "owner"), map[string]string{"owner": IssueUnknown}},
		{row(), map[string]string{"id": IssueMissing, "status": IssueMissing}},
		{row("id", "Status"), map[string]string{"status": IssueMissing, "Status": IssueUnknown}},
	}
	for _, c := range cases {
		_, err := ValidateHeader(spec, c.got)
		if got := issueCodes(t, err); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("%v: issues = %v, want %v", c.got, got, c.want)
		}
	}
	if _, err := ValidateHeader(spec, row("id", "status")); err != nil {
		t.Fatal(err)
	}
}

func TestRowBindingID(t *testing.T) {
	a := RowBindingID("Airport_Input", "r-1")
	if len(a) != 16 || a != RowBindingID("Airport_Input", "r-1") {
		t.Fatalf("unstable id %q", a)
	}
	if a == RowBindingID("Airport_System", "r-1") || a == RowBindingID("Airport_Input", "r-2") {
		t.Fatal("binding must depend on tab and anchor")
	}
	if RowBindingID("ab", "c") == RowBindingID("a", "bc") {
		t.Fatal("ambiguous concatenation")
	}
	// Bindings are stored: the id is what fmt's %016x of the sum gave.
	for _, anchor := range []string{"", "r-1", strings.Repeat("long anchor ", 20)} {
		buf := append([]byte("hikoutei/row-binding/v1"), byte(len("Airport_Input")))
		buf = append(buf, "Airport_Input"...)
		buf = binary.AppendUvarint(buf, uint64(len(anchor)))
		want := fmt.Sprintf("%016x", xxhash.Sum64(append(buf, anchor...)))
		if got := RowBindingID("Airport_Input", anchor); got != want {
			t.Fatalf("RowBindingID(%q) = %q, want %q", anchor, got, want)
		}
	}
}

// An unknown header is whatever a person typed into row 1; the error text
// (which reaches logs) names its position, never its text.
func TestHeaderErrorTextOmitsUnknownHeaderPayload(t *testing.T) {
	err := &HeaderError{Tab: "Part_Input", Issues: []HeaderIssue{
		{Code: IssueUnknown, Header: "alice@example.com 555-0100", Columns: []int{4}, Expected: -1},
		{Code: IssueMissing, Header: "name", Expected: 1},
	}}
	msg := err.Error()
	if strings.Contains(msg, "alice") || !strings.Contains(msg, "header_unknown at [4]") || !strings.Contains(msg, `header_missing "name"`) {
		t.Fatalf("message %q", msg)
	}
}
