package engine_test

import "testing"

// A quiet poll (certified from its read's digest) after a person renamed
// the Input tab while idle still reads the tab, and an edit typed in the
// renamed tab is accepted by the next poll; a tab deleted while idle is
// never certified again.
func TestQuietPollAfterATabRenamedWhileIdle(t *testing.T) {
	x := openInbound(t, t.TempDir(), nil)
	seedParts(t, x, 3)
	for range 3 {
		x.poll()
	}
	mustT(t, x.sheet.Person().RenameTab(partInput, "Parts of Ana"))
	if r := x.poll(); r.Certified != 1 {
		t.Fatalf("quiet poll of a tab renamed while idle: %+v", r)
	}
	mustT(t, x.sheet.Person().Type("Parts of Ana", x.cellRef("Parts of Ana", "2", "notes"), "renamed and edited"))
	if r := x.poll(); r.Stats.Accepted != 1 {
		t.Fatalf("poll after an edit in a tab renamed while idle: %+v", r)
	}
	x.drain()
	for range 3 {
		x.poll()
	}
	mustT(t, x.sheet.Person().DeleteTab("Parts of Ana"))
	r, err := x.h.Poll(ctx)
	if err == nil && r.Certified != 0 {
		t.Fatalf("quiet poll of a tab deleted while idle certified it: %+v", r)
	}
}
