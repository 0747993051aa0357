package evolve

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

// migratingScreen is an Input tab whose layout migration (a column name
// inserted before notes, as a field made user-editable adds it) lands
// right after the person's first look at it.
type migratingScreen struct {
	rows     [][]string
	migrated bool
}

func (m *migratingScreen) shown() [][]string {
	out := make([][]string, len(m.rows))
	for i, r := range m.rows {
		out[i] = slices.Clone(r)
	}
	return out
}

func (m *migratingScreen) migrate() {
	if m.migrated {
		return
	}
	m.migrated = true
	for i, r := range m.rows {
		m.rows[i] = slices.Insert(r, 1, map[bool]string{true: "name"}[i == 0])
	}
}

func (m *migratingScreen) Displayed(string) ([][]string, error) {
	defer m.migrate()
	return m.shown(), nil
}

func (m *migratingScreen) Type(_, ref, text string) error {
	r, err := a1.ParseCells(ref)
	if err != nil {
		return err
	}
	m.rows[r.StartRow][r.StartCol] = text
	return nil
}

func (m *migratingScreen) LookAndType(tab string, decide func([][]string) (string, string)) error {
	defer m.migrate()
	ref, text := decide(m.shown())
	if ref == "" {
		return nil
	}
	return m.Type(tab, ref, text)
}

// TestI35_APersonsEditIsCountedForTheColumnItWasTypedInWhileTheLayoutMoves:
// the campaign's person types an edit of tag while the tab's migration
// inserts a column before notes; the value the campaign counts as typed
// into tag is under the header tag, and notes keeps its value. (A look
// then a separate keystroke typed it into notes, and the store's correct
// reading of it as a notes edit was reported as a lost commit.)
func TestI35_APersonsEditIsCountedForTheColumnItWasTypedInWhileTheLayoutMoves(t *testing.T) {
	scr := &migratingScreen{rows: [][]string{{"id", "notes", "tag", layout.AnchorHeader}, {"i1", "app-1", "", "i1"}}}
	p := &person{p: scr, rng: rand.New(rand.NewPCG(1, 1)), run: 1}
	anchor, v := p.typeInto("Item_Input", field{name: "tag", kind: kindString, user: true},
		func(string, [][]string) bool { return true })
	if anchor != "i1" || v == "" {
		t.Fatalf("typed %q into row %q, want a value in row i1", v, anchor)
	}
	if !scr.migrated {
		t.Fatal("the layout never moved: the test proves nothing")
	}
	header, row := scr.rows[0], scr.rows[1]
	if got := row[slices.Index(header, "tag")]; got != v {
		t.Fatalf("tag shows %q, want %q (the tab: %q)", got, v, scr.rows)
	}
	if got := row[slices.Index(header, "notes")]; got != "app-1" {
		t.Fatalf("notes shows %q, want app-1 (the tab: %q)", got, scr.rows)
	}
}
