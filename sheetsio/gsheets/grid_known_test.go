package gsheets

import (
	"context"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio"
	"github.com/hikoutei/hikoutei-go/sheetsio/emulator"
)

// A grid read digests to the same Body while the tabs show the same
// cells; told that digest, ReadGridKnown decodes nothing (Undecoded) in
// one read request by sheetId (no enumeration). After a person's edit the known digest is stale: the
// read is made again, decoded, with a new digest.
func TestReadGridKnownDecodesOnlyWhatChanged(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "1", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a1", Values: map[string]any{"id": "1", "name": "one"}},
		{ID: "2", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a2", Values: map[string]any{"id": "2", "name": "two"}},
	}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	h.wantStatus(res, 1, sheetsio.StatusApplied)
	ctx := context.Background()
	first, err := h.p.ReadGridKnown(ctx, w, sheetsio.BodyDigest{}, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	g := first["Part_Input"]
	if g.Undecoded || len(g.Rows) != 2 || g.Body.IsZero() {
		t.Fatalf("first read %+v: want 2 decoded rows and a digest", g)
	}
	before := h.counters().Reads
	again, err := h.p.ReadGridKnown(ctx, w, g.Body, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	if a := again["Part_Input"]; !a.Undecoded || a.Rows != nil || a.Body != g.Body {
		t.Fatalf("unchanged read %+v: want Undecoded with the same digest", a)
	}
	if n := h.counters().Reads - before; n != 1 { // the grid read by sheetId
		t.Fatalf("%d read requests for an unchanged known read, want 1", n)
	}
	if err := h.emu.Person(testSheetID).Type("Part_Input", "B2", "edited"); err != nil {
		t.Fatal(err)
	}
	changed, err := h.p.ReadGridKnown(ctx, w, g.Body, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	c := changed["Part_Input"]
	if c.Undecoded || len(c.Rows) != 2 || c.Body == g.Body || c.Body.IsZero() {
		t.Fatalf("changed read %+v: want decoded rows and a new digest", c)
	}
	if v := c.Rows[0].Cells[1].Value; v != "edited" {
		t.Fatalf("edited cell reads %#v", v)
	}
	fresh, err := h.p.ReadGridKnown(ctx, w, sheetsio.BodyDigest{}, "Part_Input")
	if err != nil || fresh["Part_Input"].Body != c.Body {
		t.Fatalf("a decoded read of the same cells: %+v, %v; want the digest %x", fresh["Part_Input"], err, c.Body)
	}
}

// A values read digests to the same Body while the tabs show the same
// values: SnapshotUnchanged then says so in one read request, decoding
// nothing; after a person's edit it does not.
func TestSnapshotUnchangedComparesDigests(t *testing.T) {
	h := newHarness(t, emulator.Options{AutoCreate: true})
	w := h.provision(testSchema(t))
	res := h.dispatch(w, sheetsio.Batch{Ops: []sheetsio.Op{
		{ID: "1", Tab: "Part_Input", Kind: sheetsio.OpAppend, Anchor: "a1", Values: map[string]any{"id": "1", "name": "one"}},
	}})
	h.wantStatus(res, 0, sheetsio.StatusApplied)
	ctx := context.Background()
	snaps, err := h.p.SnapshotChecked(ctx, w, nil, "Part_Input")
	if err != nil {
		t.Fatal(err)
	}
	body := snaps["Part_Input"].Body
	if body.IsZero() || len(snaps["Part_Input"].Rows) != 1 {
		t.Fatalf("first read %+v: want a row and a digest", snaps["Part_Input"])
	}
	before := h.counters().Reads
	if same, err := h.p.SnapshotUnchanged(ctx, w, body, "Part_Input"); err != nil || !same {
		t.Fatalf("unchanged read: %v, %v; want unchanged", same, err)
	}
	if n := h.counters().Reads - before; n != 1 {
		t.Fatalf("%d read requests, want 1", n)
	}
	if err := h.emu.Person(testSheetID).Type("Part_Input", "B2", "edited"); err != nil {
		t.Fatal(err)
	}
	if same, err := h.p.SnapshotUnchanged(ctx, w, body, "Part_Input"); err != nil || same {
		t.Fatalf("read after an edit: %v, %v; want changed", same, err)
	}
}
