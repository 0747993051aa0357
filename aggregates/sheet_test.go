package aggregates

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

func TestRowEffectsCreateWritesEveryColumnWithTheKey(t *testing.T) {
	d, err := DecidePersist(EntityState{}, Persist{Entity: "Airport", ID: "GKA",
		Values: map[string]any{"name": "Goroka", "notes": nil, "alt": int64(5282)}}, now)
	if err != nil {
		t.Fatal(err)
	}
	got := RowEffects(sheetWithInput, "Airport", "GKA", keyField, d.Events[0].Payload)
	want := []Queue{
		{Target: sheetWithInput.Target(sysTab, "GKA"), Op: events.OpAppend, Entity: "Airport", ID: "GKA",
			Values: map[string]any{keyField: "GKA", "name": "Goroka", "notes": nil, "alt": int64(5282)}},
		{Target: sheetWithInput.Target(inTab, "GKA"), Op: events.OpAppend, Entity: "Airport", ID: "GKA",
			Values: map[string]any{keyField: "GKA", "name": "Goroka", "notes": nil}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("create:\n got %+v\nwant %+v", got, want)
	}
	if sys := RowEffects(systemOnly, "Airport", "GKA", keyField, d.Events[0].Payload); len(sys) != 1 || sys[0].Target.Tab != sysTab {
		t.Fatalf("an entity without user fields has only its System row: %+v", sys)
	}
}

func TestRowEffectsUpdateWritesOnlyTheChangedColumnsOfEachTab(t *testing.T) {
	cur := EntityState{Exists: true, Version: 1, Fields: map[string]FieldState{
		"name": {Hash: canon(t, "Goroka"), Revision: 1}, "notes": {Hash: canon(t, nil), Revision: 1}, "alt": {Hash: canon(t, int64(1)), Revision: 1}}}
	d, _ := DecidePersist(cur, Persist{Entity: "Airport", ID: "GKA", Values: map[string]any{"name": "Goroka Airport", "notes": nil, "alt": int64(1)}}, now)
	got := RowEffects(sheetWithInput, "Airport", "GKA", keyField, d.Events[0].Payload)
	if len(got) != 2 {
		t.Fatalf("update %+v", got)
	}
	for _, q := range got {
		if q.Op != events.OpUpdate || !reflect.DeepEqual(q.Values, map[string]any{"name": "Goroka Airport"}) {
			t.Errorf("%s: %+v, want only the changed name (never the key)", q.Target.Tab, q)
		}
	}
	// alt is not on the Input tab: only the System row changes.
	d, _ = DecidePersist(cur, Persist{Entity: "Airport", ID: "GKA", Values: map[string]any{"name": "Goroka", "notes": nil, "alt": int64(2)}}, now)
	got = RowEffects(sheetWithInput, "Airport", "GKA", keyField, d.Events[0].Payload)
	want := []Queue{{Target: sheetWithInput.Target(sysTab, "GKA"), Op: events.OpUpdate, Entity: "Airport", ID: "GKA", Values: map[string]any{"alt": int64(2)}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("alt only: %+v, want %+v", got, want)
	}
	// A change of a field no tab shows writes nothing.
	hidden := events.EntityPersisted{Entity: "Airport", ID: "GKA", Fields: map[string]any{"internal": "x"}, Revisions: map[string]uint64{"internal": 2}}
	if got := RowEffects(sheetWithInput, "Airport", "GKA", keyField, hidden); len(got) != 0 {
		t.Fatalf("no column changed, got %+v", got)
	}
}

func TestRowEffectsRemoveDeletesTheRowOfEveryTab(t *testing.T) {
	got := RowEffects(sheetWithInput, "Airport", "GKA", keyField, events.EntityRemoved{Entity: "Airport", ID: "GKA"})
	want := []Queue{
		{Target: sheetWithInput.Target(sysTab, "GKA"), Op: events.OpDelete, Entity: "Airport", ID: "GKA"},
		{Target: sheetWithInput.Target(inTab, "GKA"), Op: events.OpDelete, Entity: "Airport", ID: "GKA"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("remove %+v, want %+v", got, want)
	}
}

func TestShownHashFoldsEmptyTextIntoBlank(t *testing.T) {
	if shown(t, "") != shown(t, nil) {
		t.Fatal(`"" and a blank cell must hash equal`)
	}
	if shown(t, "x") == shown(t, nil) || shown(t, int64(0)) == shown(t, nil) || shown(t, false) == shown(t, nil) {
		t.Fatal("a non-empty value hashed as blank")
	}
	if shown(t, "Café") != shown(t, "Cafe\u0301") {
		t.Fatal("NFC and NFD must hash equal")
	}
	if shown(t, "x") != canon(t, "x") {
		t.Fatal("a shown hash of a non-empty value is its canonical hash")
	}
	if _, err := ShownHash(math.NaN()); !errors.Is(err, events.ErrNonFinite) {
		t.Fatalf("NaN: %v", err)
	}
}

func TestRenderIsTheAuditText(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("PGT", 10*3600))
	for _, tc := range []struct {
		v    any
		want string
	}{
		{nil, ""}, {"Goroka", "Goroka"}, {int64(-12), "-12"}, {1.5, "1.5"}, {1e21, "1e+21"}, {true, "true"},
		{at, "2026-01-01T17:04:05.000000006Z"}, {[]int{1}, "[1]"},
	} {
		if got := Render(tc.v); got != tc.want {
			t.Errorf("Render(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
