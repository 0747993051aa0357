package engine_test

import (
	"testing"

	"github.com/hikoutei/hikoutei-go/hikouteitest"
)

// BenchmarkBindRoutesWithoutRoutes is the routing step of a sync start
// for a store that has no routes and never had any.
func BenchmarkBindRoutesWithoutRoutes(b *testing.B) {
	x := openSyncedOn(b, b.TempDir(), hikouteitest.NewSheet(b), nil, airports)
	for b.Loop() {
		if err := x.e.BindRoutes(); err != nil {
			b.Fatal(err)
		}
	}
}
