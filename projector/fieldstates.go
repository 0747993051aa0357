package projector

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/hikoutei/hikoutei-go/aggregates"
)

// fieldStates decodes an hk_entity_state.fields column into the
// decisions' field state: what encoding/json decoding it into
// map[string]FieldRow, then entityRow.state, gives. A column in the exact
// form appendFieldState writes, with plain strings (printable ASCII, no
// escape), is read directly (parseFieldStates); anything else goes
// through encoding/json, which also reports what is wrong. A safety full
// scan decodes the field state of every row it decides, and
// encoding/json's reflection was most of that.
func fieldStates(js string) (map[string]aggregates.FieldState, error) {
	if out, ok := parseFieldStates(js); ok {
		return out, nil
	}
	row := entityRow{Fields: map[string]FieldRow{}}
	if err := json.Unmarshal([]byte(js), &row.Fields); err != nil {
		return nil, err
	}
	return row.state().Fields, nil
}

// parseFieldStates reads js when it is {"name":{"hash":"…","rev":N,
// "owner":"…"},…} with nothing else in it (no white space, no other
// member, no escape, no byte outside printable ASCII in a string, N an
// unsigned integer without a leading zero); ok is false for anything
// else. A name given twice keeps its last state, as with encoding/json.
func parseFieldStates(js string) (out map[string]aggregates.FieldState, ok bool) {
	r := fieldReader{s: js}
	if !r.take("{") {
		return nil, false
	}
	out = make(map[string]aggregates.FieldState, strings.Count(js, `,"rev":`))
	if r.take("}") {
		return out, r.done()
	}
	for {
		name, ok1 := r.str()
		ok2 := ok1 && r.take(`:{"hash":`)
		hash, ok3 := r.str()
		ok4 := ok2 && ok3 && r.take(`,"rev":`)
		rev, ok5 := r.uint()
		ok6 := ok4 && ok5 && r.take(`,"owner":`)
		_, ok7 := r.str()
		if !ok6 || !ok7 || !r.take("}") {
			return nil, false
		}
		out[name] = aggregates.FieldState{Hash: hash, Revision: rev}
		if r.take("}") {
			return out, r.done()
		}
		if !r.take(",") {
			return nil, false
		}
	}
}

// fieldReader reads s from i on (parseFieldStates).
type fieldReader struct {
	s string
	i int
}

// take consumes lit when s continues with it.
func (r *fieldReader) take(lit string) bool {
	if !strings.HasPrefix(r.s[r.i:], lit) {
		return false
	}
	r.i += len(lit)
	return true
}

// str consumes a quoted string of printable ASCII without '"' or '\'.
func (r *fieldReader) str() (string, bool) {
	if !r.take(`"`) {
		return "", false
	}
	for j := r.i; j < len(r.s); j++ {
		switch c := r.s[j]; {
		case c == '"':
			v := r.s[r.i:j]
			r.i = j + 1
			return v, true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", false
		}
	}
	return "", false
}

// uint consumes an unsigned integer: digits, no leading zero, in range.
func (r *fieldReader) uint() (uint64, bool) {
	j := r.i
	for j < len(r.s) && r.s[j] >= '0' && r.s[j] <= '9' {
		j++
	}
	d := r.s[r.i:j]
	if d == "" || len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(d, 10, 64)
	r.i = j
	return n, err == nil
}

// done reports whether all of s was read.
func (r *fieldReader) done() bool { return r.i == len(r.s) }
