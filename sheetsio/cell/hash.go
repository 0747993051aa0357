package cell

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

// VisibleHash returns the hash of a row's visible cell values: 16 lower-case
// hex digits of xxhash64 over a canonical, type-tagged, length-prefixed
// encoding. It accepts the values Encode produces and the values a values
// read returns (string, float64, json.Number, bool, nil, and int/int64).
//
// Canonical rules (I17): "" and nil are the same blank; trailing blanks are
// dropped (so a row padded to the header width and the unpadded API row hash
// equal, C04); text is NFC-normalised; -0 equals 0; numbers are compared by
// float64 value. Any other Go type is hashed by its %T and %v.
func VisibleHash(cells []any) string {
	n := len(cells)
	for n > 0 && isBlank(cells[n-1]) {
		n--
	}
	var h xxhash.Digest
	h.Reset()
	var scratch [128]byte // one cell's encoding: no allocation for short cells
	for _, c := range cells[:n] {
		_, _ = h.Write(appendCanonical(scratch[:0], c))
	}
	return hex16(h.Sum64())
}

// hex16 is v as 16 lower-case hex digits (fmt's %016x, without fmt).
func hex16(v uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i], v = digits[v&0xf], v>>4
	}
	return string(b[:])
}

func isBlank(c any) bool {
	s, ok := c.(string)
	return c == nil || (ok && s == "")
}

func appendCanonical(buf []byte, c any) []byte {
	if isBlank(c) {
		return append(buf, 'z')
	}
	switch v := c.(type) {
	case string:
		return appendTagged(buf, 's', norm.NFC.String(v))
	case bool:
		return appendTagged(buf, 'b', strconv.FormatBool(v))
	case float64:
		return appendNumber(buf, v)
	case int64:
		return appendNumber(buf, float64(v))
	case int:
		return appendNumber(buf, float64(v))
	case json.Number:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return appendNumber(buf, f)
		}
	}
	return appendTagged(buf, 'x', fmt.Sprintf("%T:%v", c, c))
}

func appendNumber(buf []byte, f float64) []byte {
	if f == 0 {
		f = 0
	}
	if math.IsNaN(f) {
		return appendTagged(buf, 'n', "NaN")
	}
	return appendTagged(buf, 'n', strconv.FormatFloat(f, 'g', -1, 64))
}

func appendTagged(buf []byte, tag byte, s string) []byte {
	buf = append(buf, tag)
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}
