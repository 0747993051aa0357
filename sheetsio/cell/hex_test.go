package cell

import (
	"fmt"
	"testing"
)

// TestHex16IsFmtsZeroPaddedHex: the row hash keeps the text it always had
// (16 lower-case hex digits, zero-padded), so hashes recorded in logs and
// read models still compare equal after the hash stopped using fmt.
func TestHex16IsFmtsZeroPaddedHex(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xf, 0xabcdef, 1 << 63, ^uint64(0), 0x0123456789abcdef} {
		if got, want := hex16(v), fmt.Sprintf("%016x", v); got != want {
			t.Errorf("hex16(%#x) = %s, want %s", v, got, want)
		}
	}
	if got, want := VisibleHash([]any{"a", 1.5, true, nil, ""}), VisibleHash([]any{"a", 1.5, true}); got != want || len(got) != 16 {
		t.Errorf("VisibleHash = %s and %s", got, want)
	}
}
