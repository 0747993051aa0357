package projector_test

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// TestExistingOfIsTheKeysEntityValuesOfReturns: for random sets of ids
// (created, removed, never seen, repeated), ExistingOf names exactly the
// ids EntityValuesOf returns values for, without reading the values.
func TestExistingOfIsTheKeysEntityValuesOfReturns(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	var evs []events.Event
	for i := range 40 {
		evs = append(evs, h.created("Airport", fmt.Sprintf("k%02d", i), goroka(), 1))
	}
	for i := 0; i < 40; i += 3 {
		evs = append(evs, h.removed("Airport", fmt.Sprintf("k%02d", i)))
	}
	must(t, p.Apply(evs))
	rnd := rand.New(rand.NewPCG(30, 3))
	for range 50 {
		var ids []string
		for range rnd.IntN(60) {
			ids = append(ids, fmt.Sprintf("k%02d", rnd.IntN(50))) // k40…k49 never existed
		}
		vals, err := p.EntityValuesOf("Airport", ids)
		must(t, err)
		exist, err := p.ExistingOf("Airport", ids)
		must(t, err)
		want, got := slices.Sorted(maps.Keys(vals)), slices.Sorted(maps.Keys(exist))
		if !slices.Equal(got, want) {
			t.Fatalf("ids %v: ExistingOf %v, EntityValuesOf %v", ids, got, want)
		}
	}
	if _, err := p.ExistingOf("Runway", []string{"x"}); !errors.Is(err, projector.ErrInvalidSchema) {
		t.Fatalf("unknown entity: %v", err)
	}
}
