package engine_test

import (
	"slices"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
)

type sizeV1 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
}

type sizeV2 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
}

type sizeV3 struct {
	ID    string `hikoutei:"id,pk"`
	Name  string `hikoutei:"name"`
	Notes string `hikoutei:"notes,user"`
	Size  int64  `hikoutei:"size"`
	Tag   string `hikoutei:"tag,user"`
}

// I35 (found by the evolution campaign, seed 3 run 8): size is dropped
// and added again (its records take 0) while the store runs too briefly
// for the System tab to follow either change, so it still shows the
// dropped field's values under the same header. A later change migrates
// the tab: its header shows both the first and the second declaration of
// size by name, and the migration took it for the newer one, kept the
// column as it was (the row then showed exactly what the store last
// wrote) and left 953 where canonical state is 0, with health ok until
// the next reconciliation. The tab shows the older declaration (no
// migration brought it to the newer one): the column is filled from
// canonical state.
func TestI35_AFieldDroppedAndAddedAgainBeforeTheTabFollowedIsFilledFromCanonicalState(t *testing.T) {
	t.Parallel()
	r := newLayoutRig(t)
	r.open(nil, hikoutei.Entity[sizeV2]("Rec"))
	commit(t, r.s, &sizeV2{ID: "a", Name: "A", Size: 953})
	r.passes(3)
	r.close()
	r.open(nil, hikoutei.Entity[sizeV1]("Rec")) // drop size; no pass
	r.close()
	r.open(nil, hikoutei.Entity[sizeV2]("Rec")) // add it again; no pass
	r.close()
	r.open(nil, hikoutei.Entity[sizeV3]("Rec"))
	r.passes(10)
	if a, err := hikoutei.Get[sizeV3](r.t.Context(), r.s, "a"); err != nil || a.Size != 0 {
		t.Fatalf("a = %+v %v", a, err)
	}
	header := []string{"id", "name", "notes", "size", "tag", anchorHeader}
	if row := r.row("Rec_System", header, "a"); !slices.Equal(row, []string{"a", "A", "", "0", "", "a"}) {
		t.Fatalf("a's System row after the migration: %q (health %+v)", row, r.state("Rec_System"))
	}
	if th := r.state("Rec_System"); th.State != hikoutei.SyncOK {
		t.Fatalf("Rec_System after its migration: %+v", th)
	}
	r.converged()
}
