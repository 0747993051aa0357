package projector

import (
	"encoding/json"
	"testing"
)

// A batch event's items, written as JSON by hand (jsonObject,
// hashesByRowid), must read back as encoding/json would have written them:
// the same members, whatever the characters of an id or hash.
func TestBatchListsReadAsJSON(t *testing.T) {
	written := map[string]string{"fx0123456789abcdef": "xxh64:0123456789abcdef", "<&>": "\"q\\\u2028\x01é", "ä": "\xff", "": ""}
	attempts := map[string]int64{"fx1": 1, "fx\"2": -9223372036854775808, "é": 9223372036854775807}
	var gotW map[string]string
	var gotA map[string]int64
	if err := json.Unmarshal([]byte(jsonObject(written, appendJSONString)), &gotW); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(jsonObject(attempts, appendInt)), &gotA); err != nil {
		t.Fatal(err)
	}
	wantW := map[string]string{}
	raw, _ := json.Marshal(written)
	must(t, json.Unmarshal(raw, &wantW)) // "\xff" reads back as U+FFFD either way
	if len(gotW) != len(wantW) || len(gotA) != len(attempts) {
		t.Fatalf("members: %v %v", gotW, gotA)
	}
	for k, v := range wantW {
		if gotW[k] != v {
			t.Errorf("written %q: %q, want %q", k, gotW[k], v)
		}
	}
	for k, v := range attempts {
		if gotA[k] != v {
			t.Errorf("attempts %q: %d, want %d", k, gotA[k], v)
		}
	}
	var byRowid map[string]string
	rows := map[string]batchRow{"<&>": {rowid: 7}, "ä": {rowid: 12}}
	must(t, json.Unmarshal([]byte(hashesByRowid(written, rows, nil)), &byRowid))
	if len(byRowid) != 2 || byRowid["7"] != wantW["<&>"] || byRowid["12"] != wantW["ä"] {
		t.Errorf("by rowid: %v", byRowid)
	}
	if got := hashesByRowid(written, nil, nil); got != "{}" {
		t.Errorf("no rows: %s, want {}", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
