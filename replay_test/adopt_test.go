package replaytest

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/hikouteitest"
	"github.com/hikoutei/hikoutei-go/sheetsio/a1"
)

// TestAdoptIntoAStoreAnEarlierBuildWrote adopts a tab into a copy of each
// recorded log (the store an earlier build wrote, its old events upcast):
// a new key is created, a key the log holds with the same name and
// altitude is unchanged, one with another altitude is never overwritten;
// and the live read model equals a replay of the log (I23), the adopted
// records included.
func TestAdoptIntoAStoreAnEarlierBuildWrote(t *testing.T) {
	ctx := context.Background()
	for _, name := range recordedLogs {
		t.Run(name, func(t *testing.T) {
			dir := replayableCopy(t, name)
			sheet := hikouteitest.NewSheet(t)
			clock := events.NewManualClock(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
			s, err := hikoutei.Open(ctx, dir, hikoutei.Options{Clock: clock, HeartbeatInterval: -1, AcquireWait: -1, NoAdmin: true,
				Sync: sheet.SyncOptions()}, airportDef())
			must(t, err)
			defer s.Close()
			all, err := hikoutei.Find[Airport](ctx, s)
			must(t, err)
			if len(all) < 2 {
				t.Fatalf("the recorded log holds %d airports", len(all))
			}
			same, other := all[0], all[1]
			rows := [][]string{{"ID", "Name", "Altitude"}, {"'ADOPT-1", "Adopted", "12"},
				{"'" + same.ID, "'" + same.Name, fmtInt(same.Altitude)}, {"'" + other.ID, "'" + other.Name, fmtInt(other.Altitude + 1)}}
			p := sheet.Person()
			_, err = p.AddTab("Kept", 10, 5)
			must(t, err)
			for r, row := range rows {
				for c, text := range row {
					must(t, p.Type("Kept", a1.CellLabel(r, c), text))
				}
			}
			hikouteitest.New(t, s)
			rep, err := s.Adopt(ctx, hikoutei.AdoptOptions{Tab: "Kept", Entity: "Airport"})
			must(t, err)
			if rep.Created != 1 || rep.Unchanged != 1 || rep.Skipped != 1 || rep.Rows[2].Reason != "key_exists" || !rep.Renamed {
				t.Fatalf("report %+v", rep)
			}
			st, err := s.Stats(ctx)
			must(t, err)
			live := digest(t, s.ReadModelPath())
			must(t, s.Close())
			target := filepath.Join(t.TempDir(), "replayed.sqlite")
			cp, err := hikoutei.Replay(ctx, dir, target, hikoutei.ReplayOptions{UpTo: st.Checkpoint}, airportDef())
			must(t, err)
			if cp != st.Checkpoint || digest(t, target) != live {
				t.Fatalf("the live read model after the adoption differs from a replay of its log (checkpoint %d, replay %d)", st.Checkpoint, cp)
			}
		})
	}
}

func fmtInt(n int64) string { return strconv.FormatInt(n, 10) }
