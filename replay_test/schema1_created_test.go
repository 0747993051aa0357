package replaytest

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// TestSchemaV1UpcastCreatedFlagNeitherWipesNorLosesRows: the schema-1 →
// 2 upcast of entity.persisted infers "created" from "every revision is
// 1" (events.upcastEntityPersistedV1), which two schema-1 histories get
// wrong. The projector upserts a row whatever the flag says
// (projector.writeRow), so neither breaks the read model:
//
//   - an update that first sets a field added later (revisions {iata: 1})
//     is inferred as a create: it must not wipe the row's other columns;
//   - a re-create after a remove continues revisions (here name: 2) and is
//     inferred as an update: the entity must have its row again.
//
// (Until the projector upserted regardless of "created", this test was
// TestKnownBug_SchemaV1UpcastMisreadsCreated, skipped unless -knownbugs.)
func TestSchemaV1UpcastCreatedFlagNeitherWipesNorLosesRows(t *testing.T) {
	dir := t.TempDir()
	clock := events.NewManualClock(time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC))
	w, err := events.OpenWriter(dir, events.WriterOptions{Log: events.Options{Clock: clock}, HeartbeatInterval: -1, AcquireWait: -1})
	must(t, err)
	put := func(id string, version uint64, e events.Event) {
		t.Helper()
		res, err := w.Append(events.Unit{Streams: []events.StreamAppend{{Stream: events.EntityStream("Airport", id), ExpectedVersion: version, Events: []events.Event{e}}}})
		must(t, err)
		must(t, res[0].Err)
	}
	put("1", 0, v1Persisted("Airport", "1", map[string]any{"name": "Goroka", "altitude": int64(5282)}, map[string]any{"name": int64(1), "altitude": int64(1)}))
	put("1", 1, v1Persisted("Airport", "1", map[string]any{"iata": "GKA"}, map[string]any{"iata": int64(1)}))
	put("2", 0, v1Persisted("Airport", "2", map[string]any{"name": "Madang"}, map[string]any{"name": int64(1)}))
	put("2", 1, removed("Airport", "2"))
	put("2", 2, v1Persisted("Airport", "2", map[string]any{"name": "Madang again"}, map[string]any{"name": int64(2)}))
	must(t, w.Close())

	// The upcast really infers the two wrong flags this test is about.
	l, err := events.OpenLog(filepath.Join(dir, events.LogFileName), events.Options{ReadOnly: true})
	must(t, err)
	var created []bool
	must(t, l.ReadFrom(1, func(e events.Event) error {
		if p, ok := e.Payload.(events.EntityPersisted); ok {
			created = append(created, p.Created)
		}
		return nil
	}))
	must(t, l.Close())
	if want := []bool{true, true, true, false}; !slices.Equal(created, want) {
		t.Fatalf("upcast created flags %v, want %v: the histories no longer exercise the misread flags (update of a new field = create, re-create = update)", created, want)
	}

	rm, _ := replayed(t, dir)
	wantRows(t, "update of a new field keeps the other columns",
		queryRows(t, rm, `SELECT name, altitude, iata FROM "Airport" WHERE id = '1'`), "Goroka|5282|GKA")
	wantRows(t, "re-create after remove has a row",
		queryRows(t, rm, `SELECT name FROM "Airport" WHERE id = '2'`), "Madang again")
}
