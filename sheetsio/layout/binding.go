package layout

import (
	"encoding/binary"
	"fmt"

	"github.com/cespare/xxhash/v2"
)

// RowBindingID returns the stable identity of a row: 16 lower-case hex
// digits of xxhash64 over a versioned, length-prefixed encoding of the
// logical tab name (e.g. "Airport_Input", never the current title, so a
// renamed tab keeps its bindings) and the row's anchor. It never depends on
// the row number.
func RowBindingID(logicalTab, anchor string) string {
	var buf []byte
	buf = append(buf, "hikoutei/row-binding/v1"...)
	for _, s := range []string{logicalTab, anchor} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	return fmt.Sprintf("%016x", xxhash.Sum64(buf))
}
