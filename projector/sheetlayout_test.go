package projector_test

import (
	"reflect"
	"testing"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// A tab's layout migration moves what the read model knows of its rows to
// the new layout: the visible hash; a held row's candidate-time hash, its
// open conflict's and the guard of a write queued before follow the row
// to the hash the migration left; a renamed column's shown state moves to
// its new name; the cells written are shown; the retired columns are
// recorded for health.
func TestSheetLayoutMigratedMovesRowStateToTheNewLayout(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	const b, tab = "bind7", "Airport_Input"
	must(t, p.Apply([]events.Event{
		h.next(events.InboundStream(tab), events.ObservationAccepted{Tab: tab, Anchor: "7", Binding: b, Entity: "Airport", ID: "7",
			Fields: map[string]any{"notes": "x"}, FieldHashes: map[string]string{"notes": "hx"}, RowHash: "old"}),
		h.next(events.InboundStream(tab), events.CandidateDetected{Tab: tab, Anchor: "7", Binding: b, Entity: "Airport", ID: "7",
			Field: "notes", CandidateHash: "hA", VisibleRevision: 1, VisibleHash: "old", CanonicalRevision: 2, ConflictID: "cf1", SheetValue: "A"}),
		h.next(events.ConflictStream("cf1"), events.ConflictOpened{ConflictID: "cf1", Entity: "Airport", ID: "7", Field: "notes",
			Tab: tab, Anchor: "7", Binding: b, CanonicalRevision: 2, CandidateHash: "hA", VisibleRevision: 1, VisibleHash: "old",
			SystemValue: "B", SheetValue: "A"}),
		h.next(events.OutboxStream(b), events.EffectQueued{EffectID: "fx1", Spreadsheet: "t", Tab: tab, Anchor: "7", Binding: b,
			StreamSequence: 1, Op: events.OpUpdate, Values: map[string]any{"notes": "B"}, PayloadHash: "ph", Entity: "Airport", ID: "7",
			ExpectedHash: "old"}),
	}))
	must(t, p.Apply([]events.Event{h.next(events.SyncStream("t"), events.SheetLayoutMigrated{Target: "t", Tab: tab,
		OldHeader: []events.SheetColumn{{Header: "id"}, {Header: "notes"}, {Header: "__hikoutei_row_id"}},
		NewHeader: []events.SheetColumn{{Header: "id"}, {Header: "remarks"}, {Header: "tag"}, {Header: "__hikoutei_row_id"}, {Header: "x (retired)"}},
		Retired:   []events.RetiredColumn{{Field: "x", Header: "x (retired)", Cells: 1}},
		Renamed:   []events.ColumnRename{{From: "notes", To: "remarks"}},
		Rows:      []events.MigratedRow{{Anchor: "7", Hash: "canon", Before: "old", After: "new", Shown: map[string]string{"tag": "ht"}}}})}))
	path := p.Path()
	wantRows(t, "visible", query(t, path, "SELECT hash, revision FROM hk_visible_state WHERE binding = ?", b), "canon|2")
	wantRows(t, "candidate row", query(t, path, "SELECT field, candidate_row_hash, coalesce(shown_hash, '') FROM hk_sheet_field_state ORDER BY field"),
		"remarks|new|hx", "tag||ht")
	wantRows(t, "conflict", query(t, path, "SELECT visible_hash FROM hk_conflicts"), "new")
	wantRows(t, "queued guard", query(t, path, "SELECT expected_hash FROM hk_outbox"), "new")
	l, err := p.SheetLayoutOf("t", tab)
	must(t, err)
	if !reflect.DeepEqual(l.Retired, []string{"x (retired)"}) || len(l.Header) != 5 {
		t.Fatalf("layout %+v", l)
	}
	facts, err := projector.SyncFacts(readConn(t, path), "t")
	must(t, err)
	if f := facts[tab]; f == nil || !reflect.DeepEqual(f.Retired, []string{"x (retired)"}) {
		t.Fatalf("sync facts %+v", facts[tab])
	}
}

func readConn(t *testing.T, path string) *sqlite.Conn {
	t.Helper()
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// I28: the rows a layout migration left differing from canonical state
// (rows[].differs) are sync facts of the tab (Migrated) that outlive the
// process: each counts until its visible state moves on (a write applied,
// an edit accepted, a later migration that leaves it equal), and not while
// people hold it (an open conflict) nor, when it shows the store's last
// write, while a write of it is in flight.
func TestSheetLayoutMigratedRowsLeftDifferingAreSyncFacts(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	const tab = "Airport_Input"
	accepted := func(id, hash string) events.Event {
		return h.next(events.InboundStream(tab), events.ObservationAccepted{Tab: tab, Anchor: id, Binding: "b" + id, Entity: "Airport", ID: id,
			Fields: map[string]any{"notes": "x"}, FieldHashes: map[string]string{"notes": "hx"}, RowHash: hash})
	}
	migrated := func(rows ...events.MigratedRow) events.Event {
		return h.next(events.SyncStream("t"), events.SheetLayoutMigrated{Target: "t", Tab: tab,
			OldHeader: []events.SheetColumn{{Header: "id"}, {Header: "__hikoutei_row_id"}},
			NewHeader: []events.SheetColumn{{Header: "id"}, {Header: "notes"}, {Header: "__hikoutei_row_id"}}, Rows: rows})
	}
	migratedCount := func(want int64) {
		t.Helper()
		facts, err := projector.SyncFacts(readConn(t, p.Path()), "t")
		must(t, err)
		if got := facts[tab]; (got == nil && want != 0) || (got != nil && got.Migrated != want) {
			t.Fatalf("migrated rows counted %+v, want %d", got, want)
		}
	}
	must(t, p.Apply([]events.Event{accepted("1", "r1"), accepted("2", "r2"), accepted("3", "r3"), accepted("4", "r4"),
		h.next(events.ConflictStream("cf4"), events.ConflictOpened{ConflictID: "cf4", Entity: "Airport", ID: "4", Field: "notes",
			Tab: tab, Anchor: "4", Binding: "b4", CanonicalRevision: 2, CandidateHash: "hA", VisibleRevision: 1, VisibleHash: "r4"}),
		migrated(events.MigratedRow{Anchor: "1", Hash: "c1", Before: "r1", After: "person", Differs: true}, // shows cells the store did not write
			events.MigratedRow{Anchor: "2", Hash: "r2", Before: "r2", Differs: true}, // shows the store's last write; canonical state moved on
			events.MigratedRow{Anchor: "3", Hash: "c3", Before: "r3"},
			events.MigratedRow{Anchor: "4", Hash: "c4", Before: "r4", After: "held", Differs: true}), // held by its conflict
	}))
	migratedCount(2)
	must(t, p.Apply([]events.Event{h.next(events.OutboxStream("b2"), events.EffectQueued{EffectID: "fx2", Spreadsheet: "t", Tab: tab,
		Anchor: "2", Binding: "b2", StreamSequence: 1, Op: events.OpUpdate, Values: map[string]any{"notes": "B"}, PayloadHash: "ph",
		Entity: "Airport", ID: "2", ExpectedHash: "r2"})}))
	migratedCount(1) // a write carries row 2 to canonical state
	must(t, p.Apply([]events.Event{accepted("1", "person")}))
	migratedCount(0) // the person's edit of row 1 was accepted
	must(t, p.Apply([]events.Event{migrated(events.MigratedRow{Anchor: "2", Hash: "r2", Before: "r2"})}))
	wantRows(t, "rows left differing", query(t, p.Path(), "SELECT anchor, stale FROM hk_migrated_rows ORDER BY anchor"), "1|0", "4|0")
}
