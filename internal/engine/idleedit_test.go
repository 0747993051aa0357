package engine_test

import (
	"testing"
)

// A person's edit between two idle passes whose grid read the store
// knows (digested, not decoded) is still found: the third idle pass is
// Undecoded, the next one after the edit decodes and accepts it; a tab
// renamed while idle, then edited, too; a tab deleted while idle is
// noticed (recorded), not skipped.
func TestIdleDigestedPassesStillFindAnEditAfterARename(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	_, p, _ := x.e.Workers()
	for range 3 {
		_, _, err := p.ScanAndCleanup(ctx)
		mustT(t, err)
	}
	s := x.stats()
	_, _, err := p.ScanAndCleanup(ctx)
	mustT(t, err)
	if got := x.stats(); got.Unchanged-s.Unchanged != 2 {
		t.Fatalf("idle passes not skipped: %+v → %+v", s, got)
	}
	x.typeIn("2", "notes", "checked by Ana")
	r, _, err := p.ScanAndCleanup(ctx)
	mustT(t, err)
	if r.Stats.Accepted != 1 {
		t.Fatalf("scan after an edit between idle passes: %+v", r)
	}
	x.drain()
	for range 3 {
		_, _, err := p.ScanAndCleanup(ctx)
		mustT(t, err)
	}
	mustT(t, x.sheet.Person().RenameTab(partInput, "Parts of Ana"))
	_, _, err = p.ScanAndCleanup(ctx)
	mustT(t, err)
	mustT(t, x.sheet.Person().Type("Parts of Ana", x.cellRef("Parts of Ana", "3", "notes"), "renamed and edited"))
	r, _, err = p.ScanAndCleanup(ctx)
	mustT(t, err)
	if r.Stats.Accepted != 1 {
		t.Fatalf("scan after an edit in a tab renamed while idle: %+v", r)
	}
	x.drain()
	for range 3 {
		_, _, err := p.ScanAndCleanup(ctx)
		mustT(t, err)
	}
	mustT(t, x.sheet.Person().DeleteTab("Parts of Ana"))
	r, _, err = p.ScanAndCleanup(ctx)
	mustT(t, err)
	if r.Stats.Events == 0 || r.Escalated != 1 {
		t.Fatalf("scan after the tab was deleted while idle saw nothing: %+v", r)
	}
}
