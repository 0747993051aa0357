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
			r.Anchor = fmt.Sprint("a", rng.IntN(4))
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
// mass deletion, quarantine, blank rows, rows without an anchor) the
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
