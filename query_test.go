package hikoutei

import (
	"errors"
	"testing"
	"time"
)

// TestRepro6_WhereChecksTheValueAgainstTheFieldKind: a filter value of
// the wrong type for its field is ErrInvalidQuery (and ErrInvalidValue),
// never a panic; integers of any Go type match int fields, and integers
// or floats match float fields.
func TestRepro6_WhereChecksTheValueAgainstTheFieldKind(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	checked := time.Date(2024, 3, 10, 7, 0, 0, 0, time.UTC)
	commit(t, s, &Airport{ID: "1", Name: "Goroka", Altitude: 5282, Lat: 2, Checked: &checked, Active: true})
	for _, tc := range []struct {
		field string
		value any
		n     int
	}{
		{"altitude", 5282, 1}, {"altitude", int32(5282), 1}, {"altitude", uint16(5282), 1},
		{"latitude", 2, 1}, {"latitude", 2.0, 1}, {"latitude", float32(2), 1},
		{"name", "Goroka", 1}, {"active", true, 1}, {"checked", checked, 1}, {"checked", &checked, 1}, {"checked", nil, 0},
	} {
		got, err := Find[Airport](ctx, s, Where(tc.field, tc.value))
		if err != nil || len(got) != tc.n {
			t.Errorf("Where(%s, %T %v): %d found, %v", tc.field, tc.value, tc.value, len(got), err)
		}
	}
	for _, tc := range []struct {
		field string
		value any
	}{
		{"altitude", "5282"}, {"altitude", 1.5}, {"altitude", true}, {"latitude", "x"}, {"name", 5}, {"name", []byte("x")},
		{"active", 1}, {"checked", "2024-03-10"}, {"checked", 5}, {"altitude", uint64(1 << 63)},
	} {
		_, err := Find[Airport](ctx, s, Where(tc.field, tc.value))
		if !errors.Is(err, ErrInvalidQuery) || !errors.Is(err, ErrInvalidValue) {
			t.Errorf("Where(%s, %T %v): %v, want invalid_query", tc.field, tc.value, tc.value, err)
		}
	}
}
