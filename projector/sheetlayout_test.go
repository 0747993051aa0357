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
