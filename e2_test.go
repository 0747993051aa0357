package hikoutei

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// E2: a commit refused for a non-finite float names the record's key
// beside its entity and field (keys may show; values never do), both at
// the public API and in the aggregate's own check.
func TestE2_NonFiniteValueErrorNamesTheRecordKey(t *testing.T) {
	s := openStore(t, t.TempDir())
	defer s.Close()
	u := s.Begin()
	u.Persist(&Airport{ID: "k1", Lat: math.Inf(1)})
	_, err := u.Commit(ctx)
	if !errors.Is(err, ErrInvalidValue) || !errors.Is(err, events.ErrNonFinite) {
		t.Fatalf("err = %v", err)
	}
	if want := `invalid_field_value: Airport "k1".latitude: canonical_non_finite`; !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %q, want it to contain %q", err, want)
	}
	if strings.Contains(err.Error(), "Inf") {
		t.Fatalf("err shows the value: %q", err)
	}
	_, err = aggregates.DecidePersist(aggregates.EntityState{}, aggregates.Persist{Entity: "Rec", ID: "k1",
		Values: map[string]any{"f": math.NaN()}}, events.SystemClock{}.Now())
	if want := `invalid_field_value: Rec "k1".f: canonical_non_finite`; err == nil || err.Error() != want {
		t.Fatalf("aggregate err = %v, want %q", err, want)
	}
}
