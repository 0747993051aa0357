package demo

import (
	"reflect"
	"testing"
)

// The demo's embedded airports are the repository's data set, unchanged:
// `hikoutei demo` from any directory loads the same 7,184 airports as
// --data testdata/data/airports.json.
func TestEmbeddedAirportsAreTheTestdataCopy(t *testing.T) {
	embedded, err := LoadAirports("")
	if err != nil {
		t.Fatal(err)
	}
	file, err := LoadAirports("../../../testdata/data/airports.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) != 7184 || !reflect.DeepEqual(embedded, file) {
		t.Fatalf("embedded: %d airports, testdata: %d; equal: %t", len(embedded), len(file), reflect.DeepEqual(embedded, file))
	}
}
