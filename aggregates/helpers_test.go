package aggregates

import (
	"bytes"
	"strconv"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Test fixtures shared by the decision tests. Everything here is pure: the
// fake sheet, the fixed clock readings and the builders have no I/O.

const (
	sysTab       = "Airport_System"
	inTab        = "Airport_Input"
	conflictsTab = "Sync_Conflicts"
	anchorCol    = "__hikoutei_row_id"
	keyField     = "code"
)

// later is a second fixed clock reading (probe and retry due times).
var later = now.Add(90 * time.Second)

// fakeSheet is a pure Sheet: a System tab for every entity and, when input
// is set, an Input tab showing the key and the user-owned fields.
type fakeSheet struct{ input bool }

var (
	sheetWithInput = fakeSheet{input: true}
	systemOnly     = fakeSheet{}
)

func (fakeSheet) Target(tab, anchor string) Target {
	return Target{Spreadsheet: "ops", Tab: tab, Anchor: anchor, Binding: tab + "/" + anchor}
}

func (s fakeSheet) RowTabs(entity string) []RowTab {
	tabs := []RowTab{{Tab: entity + "_System", Columns: []string{keyField, "name", "notes", "alt"}}}
	if s.input {
		tabs = append(tabs, RowTab{Tab: entity + "_Input", Input: true, Columns: []string{keyField, "name", "notes"}})
	}
	return tabs
}

func (fakeSheet) AnchorColumn() string { return anchorCol }
func (fakeSheet) ConflictsTab() string { return conflictsTab }

func (fakeSheet) AuditOpened(c events.ConflictOpened, at time.Time) map[string]any {
	return map[string]any{"conflict_id": c.ConflictID, "field": c.Field, "status": "OPEN", "opened_at": at}
}

func (fakeSheet) AuditResolved(how events.Resolution, actor events.Actor, at time.Time) map[string]any {
	return map[string]any{"status": "RESOLVED", "resolved_at": at, "result": string(how) + "/" + string(actor)}
}

func (fakeSheet) ChoiceRejected(reason string, clear bool) map[string]any {
	m := map[string]any{"result": reason}
	if clear {
		m["resolution"] = ""
	}
	return m
}

func (fakeSheet) AuditRefreshed(sheetValue string) map[string]any {
	return map[string]any{"sheet_value": sheetValue, "resolution": "", "result": "refreshed"}
}

func (fakeSheet) AuditValues(systemValue, sheetValue string) map[string]any {
	return map[string]any{"system_value": systemValue, "sheet_value": sheetValue}
}

// fakeLimit is the fake sheet's cell limit: a longer text shows as
// fakeMarker of its length (the real rule is sheetsio/cell's).
const fakeLimit = 20

func fakeMarker(n int) string { return "#FAKE! value_too_large " + strconv.Itoa(n) }

func (fakeSheet) ShowsMarkerOf(_, _ string, observed, canonical any) bool {
	s, ok := canonical.(string)
	return ok && len(s) > fakeLimit && observed == fakeMarker(len(s))
}

var _ Sheet = fakeSheet{}

// binding is the fake sheet's binding of a row.
func binding(tab, anchor string) string { return tab + "/" + anchor }

// shown is ShownHash that fails the test on error.
func shown(t testing.TB, v any) string {
	t.Helper()
	h, err := ShownHash(v)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// canon is events.Hash that fails the test on error.
func canon(t testing.TB, v any) string {
	t.Helper()
	h, err := events.Hash(v)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// allEvents flattens c's appends, in order.
func allEvents(c Changes) []events.Event {
	var out []events.Event
	for _, a := range c.Appends {
		out = append(out, a.Events...)
	}
	return out
}

// types lists the event types of evs, in order.
func types(evs []events.Event) []events.Type {
	out := make([]events.Type, len(evs))
	for i, e := range evs {
		out[i] = e.Type()
	}
	return out
}

// only returns the payloads of type P among evs, in order.
func only[P events.Payload](evs []events.Event) []P {
	var out []P
	for _, e := range evs {
		if p, ok := e.Payload.(P); ok {
			out = append(out, p)
		}
	}
	return out
}

// appendOf returns c's append of stream.
func appendOf(t testing.TB, c Changes, stream string) events.StreamAppend {
	t.Helper()
	for _, a := range c.Appends {
		if a.Stream == stream {
			return a
		}
	}
	t.Fatalf("no append to %s in %v", stream, streams(c))
	return events.StreamAppend{}
}

func streams(c Changes) []string {
	out := make([]string, len(c.Appends))
	for i, a := range c.Appends {
		out[i] = a.Stream
	}
	return out
}

// records is every event of c as stored record bytes, stamped with its
// position, plus the stream and expected version of each append.
func records(t testing.TB, c Changes) [][]byte {
	t.Helper()
	var out [][]byte
	seq := uint64(0)
	for _, a := range c.Appends {
		out = append(out, []byte(a.Stream), strconv.AppendUint(nil, a.ExpectedVersion, 10))
		for _, e := range a.Events {
			seq++
			e.Seq, e.Version = seq, seq
			b, err := events.MarshalRecord(e)
			if err != nil {
				t.Fatalf("marshal %s: %v", e.Type(), err)
			}
			out = append(out, b)
		}
	}
	return out
}

// queueRecords encodes queued effects canonically, in order.
func queueRecords(t testing.TB, qs []Queue) [][]byte {
	t.Helper()
	var out [][]byte
	for _, q := range qs {
		b, err := events.EncodeCanonical(map[string]any{"spreadsheet": q.Target.Spreadsheet, "tab": q.Target.Tab,
			"anchor": q.Target.Anchor, "binding": q.Target.Binding, "op": string(q.Op), "values": valuesOrNil(q.Values),
			"entity": q.Entity, "id": q.ID, "expected": q.ExpectedHash})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func sameBytes(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// foldEffect applies an effect transition decision to e, as the read
// model would: enough state to chain decisions in a test.
func foldEffect(t testing.TB, e Effect, d Decision) Effect {
	t.Helper()
	if len(d.Events) != 1 || d.Stream != events.EffectStream(e.ID) || d.ExpectedVersion != e.Version {
		t.Fatalf("transition decision %+v for %s at version %d", d, e.ID, e.Version)
	}
	switch p := d.Events[0].Payload.(type) {
	case events.EffectClaimed:
		e.State, e.ClaimToken, e.Attempts, e.Probes = EffectProcessing, p.ClaimToken, p.Attempt, 0
	case events.EffectApplied:
		e.State = EffectApplied
	case events.EffectFailed:
		e.State, e.Terminal, e.DueAt, e.LastCode, e.ObservedHash = EffectFailed, p.Terminal, p.RetryAt, p.Code, p.ObservedHash
	case events.EffectUncertain:
		e.State, e.DueAt, e.LastCode, e.Probes = EffectUncertain, p.ProbeAt, p.Code, 0
	case events.EffectProbeScheduled:
		e.Probes, e.DueAt = p.Probes, p.ProbeAt
	case events.EffectSuperseded:
		e.State = EffectSuperseded
	case events.EffectConflict:
		e.State, e.ObservedHash = EffectConflict, p.ObservedHash
	case events.EffectBlocked:
		e.State = EffectBlocked
	default:
		t.Fatalf("unexpected transition %T", p)
	}
	e.Version++
	return e
}

// effect builds an effect of the Airport_System row anchor at stream
// sequence seq.
func effect(anchor string, seq uint64, state EffectState) Effect {
	b := binding(sysTab, anchor)
	return Effect{ID: EffectID(b, seq), Target: Target{Spreadsheet: "ops", Tab: sysTab, Anchor: anchor, Binding: b},
		StreamSeq: seq, Op: events.OpUpdate, Values: map[string]any{"name": "Goroka"}, PayloadHash: "ph-" + anchor,
		Entity: "Airport", EntityID: anchor, State: state, Version: 1}
}

// claimed is effect in processing, claimed with token.
func claimed(anchor, token string) Effect {
	e := effect(anchor, 1, EffectProcessing)
	e.ClaimToken, e.Attempts, e.Version = token, 1, 2
	return e
}
