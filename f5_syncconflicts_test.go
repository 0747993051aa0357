package hikoutei_test

import (
	"context"
	"testing"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/layout"
)

type RTItem struct {
	ID   string `hikoutei:"id,pk"`
	Name string `hikoutei:"name,user"`
}

func cellOf(t *testing.T, sheet *hikouteitest.Sheet, tab, name string, row int) string {
	t.Helper()
	rows, err := sheet.Person().Displayed(tab)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range rows[0] {
		if h == name {
			return string(rune('A'+i)) + string(rune('0'+row))
		}
	}
	t.Fatalf("%s has no %s", tab, name)
	return ""
}

// F5, the red team's repro (report appendix A, whose check it keeps): a
// person edits a non-choice cell of an open conflict's Sync_Conflicts row,
// then the conflict is resolved. The RESOLVED update fails its guard
// (row_hash_mismatch, health names it); reconciliation rewrites the row
// whole by CAS against what the person left — never an update of no cell
// (invalid_op) superseded by an append (anchor_exists) and so on forever —
// so the row shows RESOLVED with the conflict's values, and the outbox's
// superseded count stops growing. Each cell a person can edit (but the
// choice) is tried.
func TestF5_AnEditedSyncConflictsRowIsRewrittenAfterItsResolutionAndNeverLoops(t *testing.T) {
	t.Parallel()
	for _, column := range []string{layout.ConflictSystemValue, layout.ConflictRecordKey, layout.ConflictField, layout.ConflictID,
		layout.ConflictStatus, layout.ConflictResult} {
		t.Run(column, func(t *testing.T) {
			ctx := context.Background()
			sheet := hikouteitest.NewSheet(t)
			s, err := hikoutei.Open(ctx, t.TempDir(), hikoutei.Options{Sync: sheet.SyncOptions(), NoAdmin: true}, hikoutei.Entity[RTItem]("RTItem"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			h := hikouteitest.New(t, s)
			commit := func(name string) {
				u := s.Begin()
				u.Persist(&RTItem{ID: "X", Name: name})
				if _, err := u.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			commit("a")
			h.Drain(ctx)
			sheet.Person().Type("RTItem_Input", cellOf(t, sheet, "RTItem_Input", "name", 2), "person")
			commit("system")
			h.Drain(ctx)
			h.Poll(ctx)
			h.Drain(ctx)
			open, _ := s.Conflicts(ctx, hikoutei.ConflictOpen)
			if len(open) != 1 {
				t.Fatalf("want 1 open conflict, got %d", len(open))
			}
			before, _ := sheet.Person().Displayed("Sync_Conflicts")
			sheet.Person().Type("Sync_Conflicts", cellOf(t, sheet, "Sync_Conflicts", column, 2), "typo")
			if _, err := s.ResolveConflict(ctx, open[0].ID, hikoutei.KeepSystem); err != nil {
				t.Fatal(err)
			}
			h.Dispatch(ctx)
			if tab := conflictsTabHealth(s); tab == nil || tab.Codes["row_hash_mismatch"] != 1 {
				t.Fatalf("health of the tab whose RESOLVED update met the edit: %+v", tab)
			}
			var superseded []int64
			for range 6 {
				h.Reconcile(ctx)
				for range 4 {
					h.Dispatch(ctx)
				}
				h.Poll(ctx)
				superseded = append(superseded, h.Outbox()[aggregates.EffectSuperseded])
			}
			rows, _ := sheet.Person().Displayed("Sync_Conflicts")
			if len(rows) != 2 || rows[1][6] != "RESOLVED" {
				t.Fatalf("resolved conflict's row still %v", rows[1:])
			}
			for i, v := range rows[1][:6] {
				if v != before[1][i] {
					t.Fatalf("the rewritten row %v differs from the conflict's %v in %s", rows[1], before[1], rows[0][i])
				}
			}
			if superseded[5] != superseded[1] || superseded[5] > 1 {
				t.Fatalf("superseded effects by reconcile pass: %v (want it to stop growing)", superseded)
			}
			if tab := conflictsTabHealth(s); tab == nil || tab.State != hikoutei.SyncOK || len(tab.Codes) != 0 {
				t.Fatalf("health of the rewritten tab: %+v", tab)
			}
		})
	}
}

func conflictsTabHealth(s *hikoutei.Store) *hikoutei.TabHealth {
	h := s.Health().SyncHealth
	if h == nil {
		return nil
	}
	for i := range h.Tabs {
		if h.Tabs[i].Tab == layout.ConflictsTab {
			return &h.Tabs[i]
		}
	}
	return &hikoutei.TabHealth{Tab: layout.ConflictsTab, State: hikoutei.SyncOK}
}
