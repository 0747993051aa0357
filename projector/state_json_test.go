package projector

import (
	"encoding/json"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// appendFieldState must write exactly what encoding/json writes, so read
// models built before and after it are byte-identical (I23 digests).
func TestFieldStateJSONEqualsJSONMarshal(t *testing.T) {
	cases := []map[string]FieldRow{
		{},
		{"name": {Hash: "xxh64:0123456789abcdef", Revision: 1, Owner: events.OwnerSystem}},
		{"b": {Revision: 7, Owner: events.OwnerUser}, "a": {Hash: "xxh64:ffffffffffffffff", Revision: 18446744073709551615, Owner: events.OwnerSystem},
			"Z_9": {Hash: "", Revision: 0, Owner: ""}},
		{"<&>": {Hash: "\"q\\\u2028\x01é", Revision: 2, Owner: "o\u007f"}, "ä": {Hash: "\xff", Owner: events.OwnerUser}},
	}
	for i, c := range cases {
		want, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFieldState(nil, c); string(got) != string(want) {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
