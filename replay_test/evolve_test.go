package replaytest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	hikoutei "github.com/hikoutei/hikoutei-go"
	"github.com/hikoutei/hikoutei-go/events"
)

// AirportV2 is Airport as a later build declares it: name renamed title,
// altitude widened to a float, notes dropped, tz made user-editable, a
// field added.
type AirportV2 struct {
	ID       string     `hikoutei:"id,pk"`
	Title    string     `hikoutei:"title,was=name"`
	City     string     `hikoutei:"city"`
	Country  string     `hikoutei:"country"`
	IATA     string     `hikoutei:"iata"`
	Lat      float64    `hikoutei:"latitude"`
	Lng      float64    `hikoutei:"longitude"`
	Altitude float64    `hikoutei:"altitude"`
	TZ       string     `hikoutei:"tz,user"`
	Checked  *time.Time `hikoutei:"checked"`
	Active   bool       `hikoutei:"active"`
	Runways  int64      `hikoutei:"runways"`
}

// A log recorded by earlier builds (schema.declared events without
// schema.changed, or no declaration at all) opens with a changed
// declaration: the change is classified against its last declaration,
// every record reads under the new names and kinds, and a rebuild equals
// the live read model.
func TestI35_AnOldLogOpensWithAChangedDeclaration(t *testing.T) {
	ctx := context.Background()
	for _, name := range recordedLogs {
		t.Run(name, func(t *testing.T) {
			dir := replayableCopy(t, name)
			opts := hikoutei.Options{Clock: events.NewManualClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)), HeartbeatInterval: -1,
				AcquireWait: -1, NoAdmin: true}
			s, err := hikoutei.Open(ctx, dir, opts, airportDef()) // records the declaration the old build had (or none)
			must(t, err)
			before, err := hikoutei.Find[Airport](ctx, s, hikoutei.OrderBy("id"))
			must(t, err)
			must(t, s.Close())

			s, err = hikoutei.Open(ctx, dir, opts, hikoutei.Entity[AirportV2]("Airport"))
			must(t, err)
			after, err := hikoutei.Find[AirportV2](ctx, s, hikoutei.OrderBy("id"))
			must(t, err)
			if len(after) != len(before) || len(after) == 0 {
				t.Fatalf("%d airports before, %d after", len(before), len(after))
			}
			for i, a := range before {
				b := after[i]
				want := AirportV2{ID: a.ID, Title: a.Name, City: a.City, Country: a.Country, IATA: a.IATA, Lat: a.Lat, Lng: a.Lng,
					Altitude: float64(a.Altitude), TZ: a.TZ, Checked: b.Checked, Active: a.Active}
				if *b != want || (a.Checked == nil) != (b.Checked == nil) || a.Checked != nil && !a.Checked.Equal(*b.Checked) {
					t.Errorf("airport %s: %+v, want %+v", a.ID, *b, want)
				}
			}
			must(t, s.Close())
			target := filepath.Join(t.TempDir(), "replayed.sqlite")
			_, err = hikoutei.Replay(ctx, dir, target, hikoutei.ReplayOptions{})
			must(t, err)
			if live, rebuilt := digest(t, filepath.Join(dir, hikoutei.ReadModelFile)), digest(t, target); live != rebuilt {
				t.Fatalf("live %s != replayed %s:\n%s", live, rebuilt, lineDiff(dump(t, filepath.Join(dir, hikoutei.ReadModelFile)), dump(t, target)))
			}
		})
	}
}
