package effects

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// streamCertify runs a Certifier over snap's rows as a read streams them.
func streamCertify(snap *sheetsio.TabSnapshot, x aggregates.TabExpectation) bool {
	c := NewCertifier(x)
	c.Begin()
	for i := range snap.Rows {
		r := &snap.Rows[i]
		d := cell.RowDigest{Blank: blankRow(r.Cells), Anchor: []byte(r.Anchor)}
		copy(d.Hash[:], r.Hash)
		if !c.Row(r.SheetRow, d) {
			return false
		}
	}
	return c.Done()
}

func hashN(i int) string { return fmt.Sprintf("%016x", i) }

func setIn(m map[string]bool, k string) map[string]bool {
	if m == nil {
		m = map[string]bool{}
	}
	m[k] = true
	return m
}

// randomTab is a small tab and an expectation drawn from few anchors and
// hashes, so duplicates, evidence, missing and restored rows all occur.
func randomTab(rng *rand.Rand) (*sheetsio.TabSnapshot, aggregates.TabExpectation) {
	var rows []sheetsio.Row
	for i := range rng.IntN(6) {
		r := sheetsio.Row{SheetRow: i + 2, Cells: []any{"v"}, Hash: hashN(rng.IntN(4))}
		switch rng.IntN(5) {
		case 0:
			r.Cells, r.Hash = []any{"", nil}, cell.VisibleHash(nil)
		case 1:
		default:
			r.Anchor = fmt.Sprint("a", rng.IntN(5))
		}
		rows = append(rows, r)
	}
	x := aggregates.TabExpectation{Rows: map[string]string{}, Evidence: map[string]bool{}, Missing: map[string]bool{},
		Flagged: rng.IntN(8) == 0}
	for a := range 4 {
		if rng.IntN(2) == 0 {
			x.Rows[fmt.Sprint("a", a)] = hashN(rng.IntN(4))
		}
		if rng.IntN(5) == 0 {
			x.Missing[fmt.Sprint("a", a)] = true
		}
	}
	for a := range 5 { // a4: an anchor only ever in flight (a backfill's row not yet written when expected)
		if rng.IntN(4) == 0 {
			x.InFlight = setIn(x.InFlight, fmt.Sprint("a", a))
		}
		if rng.IntN(10) == 0 {
			x.Lost = setIn(x.Lost, fmt.Sprint("a", a))
		}
	}
	if rng.IntN(3) == 0 {
		x.Evidence[hashN(rng.IntN(4))] = true
	}
	if rng.IntN(4) == 0 {
		x.Quarantined = map[string]bool{hashN(rng.IntN(4)): true}
	}
	return sheetsio.NewTabSnapshot("t", rows), x
}

// TestCertifierDecidesAsCertify: over many random tabs and expectations
// (duplicated anchors, evidence rows, recorded deletions, restored rows,
// mass deletion, quarantine, blank rows, rows without an anchor, rows in
// flight, lost writes) the
// streamed certification and Certify over the decoded snapshot agree.
func TestCertifierDecidesAsCertify(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 4))
	yes := 0
	for i := range 200000 {
		snap, x := randomTab(rng)
		want := Certify(snap, x)
		if got := streamCertify(snap, x); got != want {
			t.Fatalf("case %d: rows %+v expectation %+v: streamed %v, Certify %v", i, snap.Rows, x, got, want)
		}
		if want {
			yes++
		}
	}
	if yes < 1000 {
		t.Fatalf("only %d certified cases: the generator misses the interesting ones", yes)
	}
}

// TestCertifierBeginsAgain: a retried read begins the certification
// again (rows seen by the failed attempt are not duplicates).
func TestCertifierBeginsAgain(t *testing.T) {
	x := aggregates.TabExpectation{Rows: map[string]string{"a": hashN(1)}}
	snap := sheetsio.NewTabSnapshot("t", []sheetsio.Row{{Anchor: "a", Hash: hashN(1), Cells: []any{"a"}, SheetRow: 2}})
	c := NewCertifier(x)
	for range 2 {
		c.Begin()
		d := cell.RowDigest{Anchor: []byte("a")}
		copy(d.Hash[:], snap.Rows[0].Hash)
		if !c.Row(2, d) || !c.Done() {
			t.Fatal("the second attempt was not certified")
		}
	}
}

// TestCertifierTakesRowsInFlightAsTheStoreWritingThem: mid-backfill, a
// row whose effect is in flight — not yet expected, or expected with its
// previous hash — is certified (the decisions defer it until the effect
// settles), so the poll neither decodes nor escalates the tab; an
// unexpected row with nothing in flight, or one whose write was lost, is
// still refused.
func TestCertifierTakesRowsInFlightAsTheStoreWritingThem(t *testing.T) {
	rows := []sheetsio.Row{{Anchor: "a", Hash: hashN(1), Cells: []any{"a"}, SheetRow: 2},
		{Anchor: "b", Hash: hashN(2), Cells: []any{"b"}, SheetRow: 3}, {Anchor: "c", Hash: hashN(3), Cells: []any{"c"}, SheetRow: 4}}
	snap := sheetsio.NewTabSnapshot("t", rows)
	base := func() aggregates.TabExpectation {
		return aggregates.TabExpectation{Rows: map[string]string{"a": hashN(1), "b": hashN(9)}, InFlight: map[string]bool{"b": true, "c": true}}
	}
	cases := []struct {
		name string
		edit func(*aggregates.TabExpectation)
		want bool
	}{
		{"backfill rows in flight", func(*aggregates.TabExpectation) {}, true},
		{"an unexpected row with nothing in flight", func(x *aggregates.TabExpectation) { delete(x.InFlight, "c") }, false},
		{"a changed row with nothing in flight", func(x *aggregates.TabExpectation) { delete(x.InFlight, "b") }, false},
		{"a row in flight whose write was lost", func(x *aggregates.TabExpectation) { x.Lost = map[string]bool{"c": true} }, false},
	}
	for _, c := range cases {
		x := base()
		c.edit(&x)
		if got, decoded := streamCertify(snap, x), Certify(snap, x); got != c.want || decoded != c.want {
			t.Errorf("%s: streamed %v, Certify %v, want %v", c.name, got, decoded, c.want)
		}
	}
}
