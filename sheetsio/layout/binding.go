package layout

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/cespare/xxhash/v2"
)

// RowBindingID returns the stable identity of a row: 16 lower-case hex
// digits of xxhash64 over a versioned, length-prefixed encoding of the
// logical tab name (e.g. "Airport_Input", never the current title, so a
// renamed tab keeps its bindings) and the row's anchor. It never depends on
// the row number.
func RowBindingID(logicalTab, anchor string) string {
	var stack [96]byte // most tabs and anchors fit: no allocation but the id
	buf := append(stack[:0], "hikoutei/row-binding/v1"...)
	for _, s := range [...]string{logicalTab, anchor} {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	var sum [8]byte
	binary.BigEndian.PutUint64(sum[:], xxhash.Sum64(buf))
	var id [16]byte
	hex.Encode(id[:], sum[:])
	return string(id[:])
}
