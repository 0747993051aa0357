package sheetsio_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
)

// randomEntry is an entry of the engine's shapes (packed) or of another
// shape (an entry line), at random.
func randomEntry(rng *rand.Rand) sheetsio.ReceiptEntry {
	ops := []string{"append", "update", "delete"}
	e := sheetsio.ReceiptEntry{EffectID: fmt.Sprintf("fx%016x", rng.Uint64()), Op: ops[rng.IntN(3)], Tab: "City_System",
		Binding: fmt.Sprintf("%016x", rng.Uint64()), RowHash: fmt.Sprintf("%016x", rng.Uint64()), PayloadHash: fmt.Sprintf("xxh64:%016x", rng.Uint64())}
	switch rng.IntN(6) {
	case 0:
		e.EffectID = "eff-" + e.EffectID
	case 1:
		e.RowHash = "" // a delete's
	case 2:
		e.PayloadHash = "ph-1"
	case 3:
		e.EffectID = strings.ToUpper(e.EffectID)
	}
	return e
}

// TestReceiptEntriesReadBackAsWritten: a cell of random entries parses
// back to the very entries, packed ones first and without their tab and
// binding; a packed entry takes 33 characters.
func TestReceiptEntriesReadBackAsWritten(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 1))
	for range 200 {
		var es, packed, lines []sheetsio.ReceiptEntry
		for range rng.IntN(40) {
			e := randomEntry(rng)
			es = append(es, e)
			if e.Packed() {
				e.Tab, e.Binding = "", ""
				packed = append(packed, e)
			} else {
				lines = append(lines, e)
			}
		}
		text := sheetsio.FormatReceiptEntries(es)
		got, err := sheetsio.ParseReceiptEntries(text)
		if err != nil {
			t.Fatal(err)
		}
		if want := append(packed, lines...); len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("read back %+v\nwrote %+v", got, want)
		}
		first, _, _ := strings.Cut(text, "\n")
		if len(packed) > 0 && len(first) != 1+len(packed)*sheetsio.PackedEntrySize {
			t.Fatalf("%d packed entries in %d characters", len(packed), len(first))
		}
	}
}

// TestReceiptEntriesOfAnEarlierBuildParse: a cell of entry lines (the
// only form earlier builds wrote) parses with every field, the engine's
// shapes included.
func TestReceiptEntriesOfAnEarlierBuildParse(t *testing.T) {
	old := "fx00000000000000aa\tappend\tCity_System\t00000000000000bb\t00000000000000cc\txxh64:00000000000000dd\n" +
		"eff-2\tdelete\tCity_Input\t00000000000000ee\t\tph-2"
	got, err := sheetsio.ParseReceiptEntries(old)
	want := []sheetsio.ReceiptEntry{
		{EffectID: "fx00000000000000aa", Op: "append", Tab: "City_System", Binding: "00000000000000bb", RowHash: "00000000000000cc", PayloadHash: "xxh64:00000000000000dd"},
		{EffectID: "eff-2", Op: "delete", Tab: "City_Input", Binding: "00000000000000ee", PayloadHash: "ph-2"},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v", got, err)
	}
}

// TestMalformedPackedEntriesAreRefused: a packed line cut short, or with
// a character base64url does not have, or an unknown op letter, is
// receipt_malformed.
func TestMalformedPackedEntriesAreRefused(t *testing.T) {
	e := sheetsio.ReceiptEntry{EffectID: "fx0123456789abcdef", Op: "update", RowHash: "0123456789abcdef", PayloadHash: "xxh64:0123456789abcdef"}
	text := sheetsio.FormatReceiptEntries([]sheetsio.ReceiptEntry{e, e})
	for _, bad := range []string{text[:len(text)-1], text[:5] + "*" + text[6:], "~x" + text[2:], "~"} {
		if _, err := sheetsio.ParseReceiptEntries(bad); !errors.Is(err, sheetsio.ErrReceiptMalformed) {
			t.Fatalf("%q: %v", bad, err)
		}
	}
}
