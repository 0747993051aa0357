package projector

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
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

// fieldStatesByJSON is what fieldStates gives, by encoding/json alone:
// the field state the read model's readers decoded before fieldStates.
func fieldStatesByJSON(js string) (map[string]aggregates.FieldState, error) {
	row := entityRow{Fields: map[string]FieldRow{}}
	if err := json.Unmarshal([]byte(js), &row.Fields); err != nil {
		return nil, err
	}
	return row.state().Fields, nil
}

// A read model's field state, as appendFieldState writes it with plain
// strings, is read without encoding/json, and reads as encoding/json
// reads it.
func TestFieldStatesReadAppendFieldStateDirectly(t *testing.T) {
	cases := []map[string]FieldRow{
		{},
		{"name": {Hash: "xxh64:0123456789abcdef", Revision: 1, Owner: events.OwnerSystem}},
		{"b": {Revision: 7, Owner: events.OwnerUser}, "a": {Hash: "xxh64:ffffffffffffffff", Revision: 18446744073709551615, Owner: events.OwnerSystem},
			"Z_9": {Hash: "", Revision: 0, Owner: ""}, "a b.c~": {Hash: "x y{}[]:,", Revision: 10, Owner: events.OwnerUser}},
	}
	for i, c := range cases {
		js := string(appendFieldState(nil, c))
		got, ok := parseFieldStates(js)
		want, err := fieldStatesByJSON(js)
		if !ok || err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("case %d %s: read directly %v (%v), encoding/json %v (%v)", i, js, got, ok, want, err)
		}
	}
}

// fieldStates gives what encoding/json gives, for any column: the same
// field state, or an error where encoding/json has one.
func FuzzFieldStatesAsEncodingJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":{"hash":"h","rev":1,"owner":"user"}}`, `null`, `{"a":{"hash":"h","rev":01,"owner":"user"}}`,
		`{"a":{"hash":"h","rev":1,"owner":"user"},"a":{"hash":"i","rev":2,"owner":"system"}}`, `{"a":{"hash":"\u00e9","rev":1,"owner":""}}`,
		`{"a":{"hash":"h","rev":18446744073709551616,"owner":"user"}}`, `{"a":{"hash":"h","rev":-1,"owner":"user"}}`, `{"a":{"hash":"h","rev":1,"owner":"user"}} `,
		`{"a":{"hash":"h","rev":1,"owner":"user"}}x`, `{"a":{"hash":"h","rev":1.5,"owner":"user"}}`, `{"a":{"rev":1,"hash":"h","owner":"user"}}`,
		`{"a":{"hash":"h","rev":1,"owner":7}}`, `{"a":{"hash":"h\x01","rev":1,"owner":"user"}}`, "{\"\xff\":{\"hash\":\"h\",\"rev\":1,\"owner\":\"\"}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, js string) {
		got, err := fieldStates(js)
		want, wantErr := fieldStatesByJSON(js)
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %v (%v), encoding/json %v (%v)", js, got, err, want, wantErr)
		}
	})
}
