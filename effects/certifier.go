package effects

import (
	"github.com/cespare/xxhash/v2"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/cell"
)

// Certifier is Certify taken row by row while a values read streams
// (a sheetsio.RowCheck): the same decision over row digests (anchor and
// row hash) instead of decoded rows, so an unchanged tab is certified
// without a row in memory. It keeps one 8-byte key per anchor shown: two
// anchors whose keys collide count as one anchor shown twice, which only
// ever refuses a tab (the full decode then decides, as Certify).
type Certifier struct {
	x     aggregates.TabExpectation
	want  int                 // expected anchors that must show (not recorded missing)
	seen  map[uint64]struct{} // anchors shown, by xxhash
	shown int                 // distinct expected anchors shown
	data  int                 // non-blank rows
	found map[string]bool     // quarantined row hashes shown
}

var _ sheetsio.RowCheck = (*Certifier)(nil)

// NewCertifier certifies a tab against x.
func NewCertifier(x aggregates.TabExpectation) *Certifier {
	return &Certifier{x: x}
}

// Begin implements sheetsio.RowCheck.
func (c *Certifier) Begin() {
	c.want, c.shown, c.data, c.found = len(c.x.Rows), 0, 0, nil
	for a := range c.x.Missing {
		if _, ok := c.x.Rows[a]; ok {
			c.want--
		}
	}
	c.seen = make(map[uint64]struct{}, len(c.x.Rows))
}

// Row implements sheetsio.RowCheck: a non-blank row is certified when its
// hash is recorded evidence, or when it shows the expected hash of its
// anchor and is the first row showing that anchor, or when its anchor has
// an effect in flight (TabExpectation.InFlight: the rows a backfill is
// writing, which the decisions defer until the effect settles; a later
// read decides them); an anchor recorded missing must not show at all,
// and no row may show while the tab's mass deletion is recorded.
func (c *Certifier) Row(_ int, d cell.RowDigest) bool {
	if d.Blank {
		return true
	}
	c.data++
	if c.x.Flagged {
		return false // rows are back: the mass-deletion evidence is to clear
	}
	if c.x.Quarantined[string(d.Hash[:])] {
		c.quarantinedShown(string(d.Hash[:]))
	}
	evidence := c.x.Evidence[string(d.Hash[:])]
	if len(d.Anchor) == 0 {
		return evidence
	}
	k := xxhash.Sum64(d.Anchor)
	_, dup := c.seen[k]
	if dup && !evidence {
		return false // a second copy of the anchor
	}
	c.seen[k] = struct{}{}
	inFlight := c.x.InFlight[string(d.Anchor)]
	want, expected := c.x.Rows[string(d.Anchor)]
	if !expected {
		return evidence || inFlight && !c.x.Lost[string(d.Anchor)] // a row the store is writing: decided once its effect settles
	}
	if c.x.Missing[string(d.Anchor)] {
		return false // restored with recorded deletion evidence
	}
	if c.x.Lost[string(d.Anchor)] && !evidence {
		return false // its newest write was lost: examined (as Certify, unless the row is recorded evidence)
	}
	if !dup {
		c.shown++
	}
	return evidence || inFlight || want == string(d.Hash[:])
}

func (c *Certifier) quarantinedShown(h string) {
	if c.found == nil {
		c.found = map[string]bool{}
	}
	c.found[h] = true
}

// Done implements sheetsio.RowCheck: every expected anchor not recorded
// missing showed, every quarantined row still shows, and a tab showing no
// data row is certified only when its mass deletion is recorded.
func (c *Certifier) Done() bool {
	if c.data == 0 && len(c.x.Rows) > 0 {
		return c.x.Flagged
	}
	if c.x.Flagged || len(c.found) != len(c.x.Quarantined) {
		return false
	}
	return c.shown == c.want
}
