package projector_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// inspectionHistory queues four effects and moves them to failed (two
// reasons, one terminal), blocked_candidate and applied, and records
// three quarantines of which one is cleared.
func inspectionHistory() []events.Event {
	h := newHistory()
	var evs []events.Event
	queue := func(id, tab, anchor string, op events.Op, values map[string]any) {
		evs = append(evs, h.next(events.OutboxStream(tab+"/"+anchor), events.EffectQueued{EffectID: id, Spreadsheet: "1SecretSheetId",
			Tab: tab, Anchor: anchor, Binding: tab + "/" + anchor, StreamSequence: 1, Op: op, Values: values, PayloadHash: "h",
			Entity: "Airport", ID: anchor}))
	}
	settle := func(id string, p events.Payload) {
		evs = append(evs, h.next(events.EffectStream(id), events.EffectClaimed{EffectID: id, ClaimToken: "c", Attempt: 1}),
			h.next(events.EffectStream(id), p))
	}
	queue("fx1", "Airport_System", "LAX", events.OpAppend, map[string]any{"name": "secret value", "altitude": int64(1)})
	queue("fx2", "Airport_System", "SFO", events.OpUpdate, map[string]any{"name": "other"})
	queue("fx3", "Airport_Input", "JFK", events.OpUpdate, map[string]any{"notes": "n"})
	queue("fx4", "Airport_Input", "BOS", events.OpAppend, map[string]any{"notes": "m"})
	settle("fx1", events.EffectFailed{EffectID: "fx1", ClaimToken: "c", Code: "value_unencodable", Terminal: true})
	settle("fx2", events.EffectFailed{EffectID: "fx2", ClaimToken: "c", Code: "sheet_header_drift", RetryAt: t0.Add(time.Minute)})
	settle("fx3", events.EffectBlocked{EffectID: "fx3", ClaimToken: "c", Code: "candidate_row_changed"})
	settle("fx4", events.EffectApplied{EffectID: "fx4", ClaimToken: "c", WrittenHash: "w", Via: "dispatch"})
	quarantine := func(id, anchor, reason string) {
		evs = append(evs, h.next(events.InboundStream("Airport_Input"), events.RowQuarantined{Tab: "Airport_Input", Anchor: anchor,
			SheetRow: 3, RowHash: "rh", Reason: reason, Column: "notes", QuarantineID: id}))
	}
	quarantine("q1", "JFK", "cell_type_mismatch")
	quarantine("q2", "BOS", "row_deleted")
	quarantine("q3", "LAX", "row_deleted")
	evs = append(evs, h.next(events.InboundStream("Airport_Input"), events.RowQuarantineCleared{Tab: "Airport_Input", QuarantineID: "q3", Anchor: "LAX"}))
	return evs
}

// inspectionConn is a read-only connection to a read model holding
// inspectionHistory, as another process opens it.
func inspectionConn(t *testing.T) *sqlite.Conn {
	t.Helper()
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	must(t, p.Apply(inspectionHistory()))
	must(t, p.Close())
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func outboxIDs(t *testing.T, conn *sqlite.Conn, f projector.OutboxFilter) ([]string, int64) {
	t.Helper()
	rows, total, err := projector.ListOutbox(conn, f)
	must(t, err)
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids, total
}

func TestListOutboxFiltersByStateReasonAndTabNewestFirst(t *testing.T) {
	conn := inspectionConn(t)
	cases := []struct {
		name  string
		f     projector.OutboxFilter
		want  []string
		total int64
	}{
		{"all", projector.OutboxFilter{}, []string{"fx4", "fx3", "fx2", "fx1"}, 4},
		{"failed", projector.OutboxFilter{States: []aggregates.EffectState{aggregates.EffectFailed}}, []string{"fx2", "fx1"}, 2},
		{"failed or blocked", projector.OutboxFilter{States: []aggregates.EffectState{aggregates.EffectFailed, aggregates.EffectBlocked}},
			[]string{"fx3", "fx2", "fx1"}, 3},
		{"reason", projector.OutboxFilter{Reason: "sheet_header_drift"}, []string{"fx2"}, 1},
		{"tab", projector.OutboxFilter{Tab: "Airport_Input"}, []string{"fx4", "fx3"}, 2},
		{"limit", projector.OutboxFilter{Limit: 1}, []string{"fx4"}, 4},
		{"nothing", projector.OutboxFilter{Reason: "sheet_header_drift", Tab: "Airport_Input"}, []string{}, 0},
	}
	for _, c := range cases {
		ids, total := outboxIDs(t, conn, c.f)
		if !reflect.DeepEqual(ids, c.want) || total != c.total {
			t.Errorf("%s: %v of %d, want %v of %d", c.name, ids, total, c.want, c.total)
		}
	}
}

func TestListOutboxNeverCarriesPayloadFieldsOrTheSpreadsheet(t *testing.T) {
	rows, _, err := projector.ListOutbox(inspectionConn(t), projector.OutboxFilter{})
	must(t, err)
	for _, r := range rows {
		if r.Fields != nil {
			t.Fatalf("%s lists its payload's fields %v", r.ID, r.Fields)
		}
		if reflect.ValueOf(r).FieldByName("Spreadsheet").IsValid() {
			t.Fatal("OutboxEntry carries the spreadsheet")
		}
	}
	fx1 := rows[3]
	if fx1.State != aggregates.EffectFailed || fx1.Reason != "value_unencodable" || !fx1.Terminal || fx1.Attempts != 1 ||
		fx1.Op != events.OpAppend || fx1.Tab != "Airport_System" || fx1.EntityID != "LAX" {
		t.Fatalf("fx1 = %+v", fx1)
	}
	if fx2 := rows[2]; fx2.Terminal || !fx2.DueAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("fx2 retry: %+v", fx2)
	}
}

func TestInspectOutboxEntryNamesPayloadFieldsAndReturnsValuesSeparately(t *testing.T) {
	conn := inspectionConn(t)
	e, values, err := projector.InspectOutboxEntry(conn, "fx1")
	must(t, err)
	if !reflect.DeepEqual(e.Fields, []string{"altitude", "name"}) || values["name"] != "secret value" {
		t.Fatalf("fields %v values %v", e.Fields, values)
	}
	if _, _, err := projector.InspectOutboxEntry(conn, "fx-unknown"); !errors.Is(err, projector.ErrOutboxEntryNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestOutboxReasonsCountFailedAndBlockedByCode(t *testing.T) {
	got, err := projector.OutboxReasons(inspectionConn(t), aggregates.EffectFailed, aggregates.EffectBlocked)
	must(t, err)
	want := map[aggregates.EffectState][]projector.ReasonCount{
		aggregates.EffectFailed:  {{Reason: "sheet_header_drift", Count: 1}, {Reason: "value_unencodable", Count: 1}},
		aggregates.EffectBlocked: {{Reason: "candidate_row_changed", Count: 1}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestListQuarantineActiveByDefaultAllOnRequest(t *testing.T) {
	conn := inspectionConn(t)
	ids := func(f projector.QuarantineFilter) ([]string, int64) {
		rows, total, err := projector.ListQuarantine(conn, f)
		must(t, err)
		out := []string{}
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out, total
	}
	if got, n := ids(projector.QuarantineFilter{}); !reflect.DeepEqual(got, []string{"q2", "q1"}) || n != 2 {
		t.Fatalf("active: %v of %d", got, n)
	}
	if got, n := ids(projector.QuarantineFilter{Scope: projector.QuarantineAll, Reason: "row_deleted"}); !reflect.DeepEqual(got, []string{"q3", "q2"}) || n != 2 {
		t.Fatalf("all row_deleted: %v of %d", got, n)
	}
	if got, n := ids(projector.QuarantineFilter{Scope: projector.QuarantineAll, Tab: "Airport_System"}); len(got) != 0 || n != 0 {
		t.Fatalf("other tab: %v of %d", got, n)
	}
	if got, n := ids(projector.QuarantineFilter{Scope: projector.QuarantineAll, Limit: 1}); len(got) != 1 || n != 3 {
		t.Fatalf("limit: %v of %d", got, n)
	}
}

func TestQuarantineEntryByIDAndReasons(t *testing.T) {
	conn := inspectionConn(t)
	q, err := projector.QuarantineEntryByID(conn, "q3")
	must(t, err)
	if q.Active || q.ClearedSeq == 0 || q.Reason != "row_deleted" || q.Anchor != "LAX" || q.Column != "notes" || q.SheetRow != 3 {
		t.Fatalf("q3 = %+v", q)
	}
	if _, err := projector.QuarantineEntryByID(conn, "q-unknown"); !errors.Is(err, projector.ErrQuarantineEntryNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
	reasons, err := projector.QuarantineReasons(conn)
	must(t, err)
	want := []projector.ReasonCount{{Reason: "cell_type_mismatch", Count: 1}, {Reason: "row_deleted", Count: 1}}
	if !reflect.DeepEqual(reasons, want) {
		t.Fatalf("reasons %v", reasons)
	}
}
