package engine_test

import (
	"slices"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/internal/engine"
)

type histV1 struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name,user"`
}

type histV2 struct {
	ID    string `hikoutei:"id,pk"`
	Title string `hikoutei:"title,user,was=name"`
	Pop   int64  `hikoutei:"pop"`
}

// The engine exposes the store's shape history as Open left it, and the
// spreadsheet layout of each era (what the sheet's layout migration
// compares an older header with).
func TestI35_ShapeHistoryAndTheLayoutOfEachEra(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := hikoutei.Options{HeartbeatInterval: -1, NoAdmin: true}
	s, err := hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[histV1]("Rec"))
	mustT(t, err)
	commit(t, s, &histV1{ID: "a", Name: "Alpha"})
	mustT(t, s.Close())
	s, err = hikoutei.Open(t.Context(), dir, opts, hikoutei.Entity[histV2]("Rec"))
	mustT(t, err)
	defer s.Close()
	hist := engine.Of(s).ShapeHistory()
	if len(hist) != 2 || hist[0].Changed != nil || hist[1].Changed == nil {
		t.Fatalf("history %+v", hist)
	}
	if name, ok := hist.FieldName("Rec", "name", hist[0].Seq); !ok || name != "title" {
		t.Errorf("FieldName(name) = %q %v", name, ok)
	}
	layouts, err := engine.EraLayouts(hist)
	mustT(t, err)
	if len(layouts) != 2 || layouts[1].Seq != hist[1].Seq {
		t.Fatalf("layouts %+v", layouts)
	}
	want := [][]string{{"id", "name", "__hikoutei_row_id"}, {"id", "title", "pop", "__hikoutei_row_id"}}
	for i, l := range layouts {
		tab, ok := l.Layout.Tab("Rec_System")
		if !ok {
			t.Fatalf("era %d has no Rec_System", i)
		}
		var cols []string
		for _, c := range tab.Columns {
			cols = append(cols, c.Name)
		}
		if !slices.Equal(cols, want[i]) {
			t.Errorf("era %d: Rec_System columns %v, want %v", i, cols, want[i])
		}
	}
}
