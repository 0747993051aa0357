package hikoutei

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// hostileNames are names with SQL quotes, LIKE and GLOB wildcards,
// case variants and non-ASCII text, one airport each (id = its index).
var hostileNames = []string{
	"Goroka", "goroka", "Gor%ka", "Gor_ka", "Gor*ka", "Gor?ka", "Gor[o]ka", "O'Hare", `O"Hare`, "O'Hare'; DROP TABLE Airport; --",
	"100%", "100_", "1000", `back\slash`, "Zürich", "Zu\u0308rich", "", "日本", "日本語", "%", "_",
}

func queryStore(t *testing.T) *Store {
	t.Helper()
	s := openStore(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	checked := time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC)
	var all []any
	for i, n := range hostileNames {
		c := checked.Add(time.Duration(i) * time.Hour)
		all = append(all, &Airport{ID: idOf(i), Name: n, Altitude: int64(i * 100), Lat: float64(i) / 2, Active: i%2 == 0, Checked: &c})
	}
	all = append(all, &Airport{ID: "nil-checked", Name: "Nowhere", Altitude: -5})
	commit(t, s, all...)
	return s
}

func nfc(s string) string {
	n, err := events.NormalizeString(s)
	if err != nil {
		panic(err)
	}
	return n
}

func idOf(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

// ids runs Find and Count with opts and checks they agree; it returns the
// ids found, in key order.
func ids(t *testing.T, s *Store, opts ...QueryOption) []string {
	t.Helper()
	got, err := Find[Airport](ctx, s, opts...)
	if err != nil {
		t.Fatalf("Find: %v", err)
	}
	n, err := Count[Airport](ctx, s, opts...)
	if err != nil || n != len(got) {
		t.Fatalf("Count = %d, %v; Find found %d", n, err, len(got))
	}
	out := make([]string, len(got))
	for i, a := range got {
		out[i] = a.ID
	}
	return out
}

// want returns the ids of the hostile airports for which keep holds.
func want(keep func(i int, name string) bool) []string {
	var out []string
	for i, n := range hostileNames {
		if keep(i, nfc(n)) {
			out = append(out, idOf(i))
		}
	}
	return out
}

// WherePrefix matches exactly the names that start with the prefix in
// Go's strings.HasPrefix: case-sensitive, and '%', '_', '*', '?', '[',
// quotes and backslashes are themselves, never patterns or SQL.
func TestWherePrefixIsExactWithHostileValues(t *testing.T) {
	s := queryStore(t)
	for _, p := range []string{"Gor", "gor", "Gor%", "Gor_", "Gor*", "Gor[", "%", "_", "100%", "100_", "O'", `O"`, "O'Hare'; DROP",
		`back\`, "Zü", "Zu\u0308", "日本", "", "x"} {
		got := ids(t, s, WherePrefix("name", p))
		exp := want(func(_ int, n string) bool { return strings.HasPrefix(n, nfc(p)) })
		if p == "" {
			exp = append(exp, "nil-checked") // every name starts with ""
			slices.Sort(exp)
		}
		if !slices.Equal(got, exp) {
			t.Errorf("WherePrefix(name, %q) = %v, want %v", p, got, exp)
		}
	}
	if n, err := Count[Airport](ctx, s); err != nil || n != len(hostileNames)+1 {
		t.Fatalf("the table lost rows: %d, %v", n, err)
	}
}

// WhereCmp orders numbers by value, strings byte by byte and times by
// instant; a NULL field never matches an ordering.
func TestWhereCmpOrdersByKind(t *testing.T) {
	s := queryStore(t)
	checked := time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		opt    QueryOption
		keep   func(i int, n string) bool
		nilRow bool // the row "nil-checked" (altitude -5, latitude 0, name Nowhere, checked NULL) matches
	}{
		{WhereCmp("altitude", Ge, 1000), func(i int, _ string) bool { return i >= 10 }, false},
		{WhereCmp("altitude", Lt, int32(300)), func(i int, _ string) bool { return i < 3 }, true},
		{WhereCmp("latitude", Gt, 4.5), func(i int, _ string) bool { return float64(i)/2 > 4.5 }, false},
		{WhereCmp("latitude", Le, 1), func(i int, _ string) bool { return float64(i)/2 <= 1 }, true},
		{WhereCmp("name", Gt, "O'Hare"), func(_ int, n string) bool { return n > "O'Hare" }, false},
		{WhereCmp("name", Le, "Gor_ka"), func(_ int, n string) bool { return n <= "Gor_ka" }, false},
		{WhereCmp("checked", Lt, checked.Add(2*time.Hour)), func(i int, _ string) bool { return i < 2 }, false},
		{WhereCmp("checked", Ge, checked.Add(20*time.Hour)), func(i int, _ string) bool { return i >= 20 }, false},
		{WhereCmp("active", Gt, false), func(i int, _ string) bool { return i%2 == 0 }, false},
		{WhereCmp("id", Eq, "ab"), func(i int, _ string) bool { return i == 1 }, false},
	} {
		exp := want(tc.keep)
		if tc.nilRow {
			exp = append(exp, "nil-checked")
		}
		if got := ids(t, s, tc.opt); !slices.Equal(got, exp) {
			t.Errorf("got %v, want %v", got, exp)
		}
	}
}

// WhereIn matches any of its values; none matches nothing; it combines
// with the other conditions (AND) and with ordering and paging.
func TestWhereInAndCount(t *testing.T) {
	s := queryStore(t)
	got := ids(t, s, WhereIn("name", "O'Hare", "%", "no such", "Gor%ka"))
	if exp := []string{idOf(2), idOf(7), idOf(19)}; !slices.Equal(got, exp) {
		t.Errorf("WhereIn(name, …) = %v, want %v", got, exp)
	}
	if got := ids(t, s, WhereIn("altitude")); len(got) != 0 {
		t.Errorf("WhereIn with no values matched %v", got)
	}
	got = ids(t, s, WhereIn("altitude", 0, 100, 200, 300), WhereCmp("altitude", Gt, 0))
	if exp := []string{idOf(1), idOf(2), idOf(3)}; !slices.Equal(got, exp) {
		t.Errorf("WhereIn AND WhereCmp = %v, want %v", got, exp)
	}
	page, err := Find[Airport](ctx, s, WhereCmp("altitude", Ge, 0), OrderByDesc("altitude"), Limit(2), Offset(1))
	if err != nil || len(page) != 2 || page[0].Altitude != int64((len(hostileNames)-2)*100) {
		t.Fatalf("ordered page: %v, %v", page, err)
	}
	if n, err := Count[Airport](ctx, s, WhereCmp("altitude", Ge, 0), Limit(2)); err != nil || n != len(hostileNames) {
		t.Fatalf("Count ignores Limit: %d, %v", n, err)
	}
}

// Malformed conditions are invalid_query, never a panic or a silent
// match: a prefix of a number field, nil in an ordering or IN, a value of
// another kind, an unknown operator or field.
func TestTypedWhereRejectsMalformedConditions(t *testing.T) {
	s := queryStore(t)
	for name, opt := range map[string]QueryOption{
		"prefix of a number":  WherePrefix("altitude", "1"),
		"ordering with nil":   WhereCmp("altitude", Gt, nil),
		"nil in IN":           WhereIn("name", "Goroka", nil),
		"IN of another kind":  WhereIn("altitude", "1"),
		"cmp of another kind": WhereCmp("name", Lt, 5),
		"unknown operator":    WhereCmp("name", Op("LIKE"), "G%"),
		"unknown field":       WherePrefix("nope", "G"),
	} {
		if _, err := Find[Airport](ctx, s, opt); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("%s: Find: %v, want invalid_query", name, err)
		}
		if _, err := Count[Airport](ctx, s, opt); !errors.Is(err, ErrInvalidQuery) {
			t.Errorf("%s: Count: %v, want invalid_query", name, err)
		}
	}
}

// FuzzWherePrefix: for any prefix, WherePrefix finds exactly the names
// strings.HasPrefix accepts (after NFC, as stored), and the table is
// intact afterwards.
func FuzzWherePrefix(f *testing.F) {
	for _, n := range hostileNames {
		f.Add(n)
		if len(n) > 1 {
			f.Add(n[:len(n)-1])
		}
	}
	s := openStore(f, f.TempDir())
	f.Cleanup(func() { s.Close() })
	var all []any
	for i, n := range hostileNames {
		all = append(all, &Airport{ID: idOf(i), Name: n})
	}
	commit(f, s, all...)
	f.Fuzz(func(t *testing.T, p string) {
		got, err := Find[Airport](ctx, s, WherePrefix("name", p))
		if err != nil {
			if errors.Is(err, ErrInvalidQuery) && errors.Is(err, ErrInvalidValue) {
				return // not valid UTF-8 text
			}
			t.Fatalf("WherePrefix(%q): %v", p, err)
		}
		np := nfc(p)
		var exp []string
		for i := range hostileNames {
			if strings.HasPrefix(nfc(hostileNames[i]), np) {
				exp = append(exp, idOf(i))
			}
		}
		var gotIDs []string
		for _, a := range got {
			gotIDs = append(gotIDs, a.ID)
		}
		if !slices.Equal(gotIDs, exp) {
			t.Fatalf("WherePrefix(%q) = %v, want %v", p, gotIDs, exp)
		}
	})
}
