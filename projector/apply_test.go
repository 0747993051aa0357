package projector_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

var checked = time.Date(2024, 3, 10, 7, 0, 0, 123000000, time.UTC)

func goroka() map[string]any {
	return map[string]any{"name": "Goroka Airport", "altitude": int64(5282), "latitude": -6.081689834590001,
		"active": true, "checked": checked, "notes": "00123"}
}

// goldenCases are hand-built histories, each applied batch by batch to a
// fresh read model whose Dump must equal testdata/golden/<name>.txt.
var goldenCases = map[string]func(h *history) [][]events.Event{
	// A create with a value of every kind, a create with a null time and
	// an NFC name, then updates carrying only the changed fields (one of
	// them not a column of the table: kept in the field state only).
	"create_update": func(h *history) [][]events.Event {
		b := map[string]any{"name": "Caf\u00e9", "altitude": int64(-12), "latitude": 0.5, "active": false, "checked": nil, "notes": ""}
		return [][]events.Event{
			{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", b, 1)},
			{h.persisted("Airport", "A", false, map[string]any{"altitude": int64(5283), "checked": nil}, map[string]uint64{"altitude": 2, "checked": 2})},
			{h.persisted("Airport", "B", false, map[string]any{"checked": checked, "legacy": "not a column"}, map[string]uint64{"checked": 2, "legacy": 1}),
				h.persisted("Airport", "A", false, map[string]any{"notes": "edited"}, map[string]uint64{"notes": 2})},
		}
	},
	// Remove deletes the row and clears hashes but keeps revisions; a
	// re-create with fewer fields leaves the others NULL and continues
	// the revisions of the fields it carries.
	"remove_recreate": func(h *history) [][]events.Event {
		return [][]events.Event{
			{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", map[string]any{"name": "Madang"}, 1)},
			{h.removed("Airport", "A")},
			{h.created("Airport", "A", map[string]any{"name": "Goroka again", "altitude": int64(1)}, 2)},
			{h.persisted("Airport", "A", false, map[string]any{"altitude": int64(2)}, map[string]uint64{"altitude": 3})},
		}
	},
	// Lease events: the current lease per role (host, pid and operation
	// kept when a later event does not carry them) and the full history,
	// a reconciliation included.
	"lease": func(h *history) [][]events.Event {
		grant := func(epoch uint64, writer, host string, pid int64, op string) events.LeaseGrant {
			return events.LeaseGrant{State: events.LeaseStateHeld, WriterID: writer, Epoch: epoch, Host: host, PID: pid,
				Operation: op, Reason: "vacant", LeaseUntil: t0.Add(time.Hour)}
		}
		return [][]events.Event{
			{h.lease(1, events.LeaseAcquired(grant(1, "w1", "host-a", 100, "serve")))},
			{h.created("Airport", "A", map[string]any{"name": "x"}, 1)},
			{h.lease(2, events.LeaseReconciled{State: events.LeaseStateReconciled, WriterID: "w1", Host: "host-a", PID: 100,
				Operation: "serve", AcquiredAt: t0, ByWriterID: "w2"}),
				h.lease(2, events.LeaseTakenOver(grant(2, "w2", "host-b", 200, "demo")))},
			{h.lease(2, events.LeaseReleased{State: events.LeaseStateReleased, WriterID: "w2", Epoch: 2})},
		}
	},
	// Events whose projection writes nothing (schema.declared, typed or as
	// recorded) still move the checkpoint; an entity the schema does not
	// declare gets canonical state but no table. (This history once held
	// event types outside the catalogue, which the projector skipped; they
	// are an error now — TestApplyEventWithoutProjectionFails — and the
	// golden bytes did not change.)
	"unknown_and_undeclared": func(h *history) [][]events.Event {
		declared := events.SchemaDeclared{Entities: []events.EntityShape{airportShape(), runwayShape()}}
		recorded, err := events.EncodePayload(declared)
		if err != nil {
			panic(err)
		}
		return [][]events.Event{
			{h.next(events.SchemaStream, declared),
				h.created("Runway", "1-09", map[string]any{"length_m": int64(1600), "surface": "asphalt"}, 1)},
			{h.persisted("Runway", "1-09", false, map[string]any{"surface": "grass"}, map[string]uint64{"surface": 2}),
				h.next(events.SchemaStream, events.Recorded{Type: events.TypeSchemaDeclared, Schema: 1, Fields: recorded})},
			{h.removed("Runway", "1-09"), h.next(events.SchemaStream, events.SchemaDeclared{})},
		}
	},
}

func TestApplyGolden(t *testing.T) {
	for name, build := range goldenCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := openFresh(t)
			var last uint64
			for _, batch := range build(newHistory()) {
				must(t, p.Apply(batch))
				last = batch[len(batch)-1].Seq
				if p.Checkpoint() != last {
					t.Fatalf("checkpoint %d after a batch ending at %d", p.Checkpoint(), last)
				}
			}
			compareGolden(t, name, dump(t, p.Path()))
		})
	}
}

// TestApplyGoldenIsIndependentOfBatching: applying every golden history
// as one batch, or one event per batch, gives the same read model.
func TestApplyGoldenIsIndependentOfBatching(t *testing.T) {
	for name, build := range goldenCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var all []events.Event
			for _, b := range build(newHistory()) {
				all = append(all, b...)
			}
			one, each := openFresh(t), openFresh(t)
			must(t, one.Apply(all))
			for i := range all {
				must(t, each.Apply(all[i:i+1]))
			}
			if d1, d2 := dump(t, one.Path()), dump(t, each.Path()); !bytes.Equal(d1, d2) {
				t.Fatalf("one batch:\n%s\none event per batch:\n%s", d1, d2)
			}
		})
	}
}

// TestApplyIsIdempotent: events at or below the checkpoint are skipped,
// so re-applying a batch (after a crash between the SQLite commit and the
// caller learning of it) changes nothing, and an overlapping batch applies
// only its new events.
func TestApplyIsIdempotent(t *testing.T) {
	h := newHistory()
	evs := []events.Event{
		h.created("Airport", "A", goroka(), 1),
		h.persisted("Airport", "A", false, map[string]any{"altitude": int64(1)}, map[string]uint64{"altitude": 2}),
		h.removed("Airport", "A"),
		h.created("Airport", "A", map[string]any{"name": "again"}, 2),
		h.persisted("Airport", "A", false, map[string]any{"altitude": int64(7)}, map[string]uint64{"altitude": 4}),
		h.created("Airport", "B", map[string]any{"name": "b"}, 1),
	}
	p := openFresh(t)
	must(t, p.Apply(evs[:4]))
	before, beforeDump := digest(t, p.Path()), dump(t, p.Path())
	for _, again := range [][]events.Event{evs[:4], evs[1:3], evs[3:4], evs[:1], nil} {
		must(t, p.Apply(again))
		if p.Checkpoint() != 4 || digest(t, p.Path()) != before {
			t.Fatalf("re-applying seqs %v changed the read model (checkpoint %d):\n%s\n---\n%s",
				seqs(again), p.Checkpoint(), beforeDump, dump(t, p.Path()))
		}
	}
	must(t, p.Apply(evs[2:])) // overlaps: 3, 4 skipped, 5, 6 applied
	fresh := openFresh(t)
	must(t, fresh.Apply(evs))
	if p.Checkpoint() != 6 || !bytes.Equal(dump(t, p.Path()), dump(t, fresh.Path())) {
		t.Fatalf("overlapping batch: checkpoint %d\n%s\n--- applied once:\n%s", p.Checkpoint(), dump(t, p.Path()), dump(t, fresh.Path()))
	}
	wantRows(t, "revisions after the overlap", query(t, p.Path(),
		`SELECT field, revision FROM hk_field_state WHERE entity = 'Airport' AND id = 'A' AND field IN ('altitude', 'name') ORDER BY field`),
		"altitude|4", "name|2")
}

func seqs(evs []events.Event) []uint64 {
	var out []uint64
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

// TestFailingBatchLeavesReadModelAndCheckpointUnchanged: when one event of
// a batch cannot be applied, Apply fails with ErrProjection naming it, and
// nothing of the batch — not even its valid events before the bad one — is
// applied; the checkpoint stays, in memory and on disk. The batch applies
// once fixed.
func TestFailingBatchLeavesReadModelAndCheckpointUnchanged(t *testing.T) {
	recorded := func(fields map[string]any) events.Payload {
		return events.Recorded{Type: events.TypeEntityPersisted, Schema: 2, Fields: fields}
	}
	bad := map[string]events.Payload{
		"persisted without id": events.EntityPersisted{Entity: "Airport", Created: true, Fields: map[string]any{"name": "x"},
			Revisions: map[string]uint64{"name": 1}},
		"persisted without entity": events.EntityPersisted{ID: "C", Created: true, Fields: map[string]any{"name": "x"},
			Revisions: map[string]uint64{"name": 1}},
		"recorded persisted without id": recorded(map[string]any{"entity": "Airport", "fields": map[string]any{"name": "x"},
			"revisions": map[string]any{"name": int64(1)}, "created": true}),
		"persisted with int id": recorded(map[string]any{"entity": "Airport", "id": int64(3), "fields": map[string]any{},
			"revisions": map[string]any{}, "created": true}),
		"field without canonical form": events.EntityPersisted{Entity: "Airport", ID: "C", Created: true,
			Fields: map[string]any{"name": []byte("raw")}, Revisions: map[string]uint64{"name": 1}},
	}
	for name, payload := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), projector.FileName)
			p := openAt(t, path)
			h := newHistory()
			must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", map[string]any{"name": "b"}, 1)}))
			before := dump(t, path)

			good := h.persisted("Airport", "A", false, map[string]any{"name": "renamed"}, map[string]uint64{"name": 2})
			other := h.created("Airport", "C", map[string]any{"name": "c"}, 1)
			broken := h.next(events.EntityStream("Airport", "C"), payload)
			err := p.Apply([]events.Event{good, other, broken})
			if !errors.Is(err, projector.ErrProjection) {
				t.Fatalf("Apply with a bad event: %v", err)
			}
			if p.Checkpoint() != 2 || !bytes.Equal(dump(t, path), before) {
				t.Fatalf("failed batch left checkpoint %d and:\n%s", p.Checkpoint(), dump(t, path))
			}
			must(t, p.Close())
			p = openAt(t, path)
			defer p.Close()
			if p.Checkpoint() != 2 {
				t.Fatalf("checkpoint on disk %d after a failed batch", p.Checkpoint())
			}
			must(t, p.Apply([]events.Event{good, other}))
			if p.Checkpoint() != 4 {
				t.Fatalf("checkpoint %d after the fixed batch", p.Checkpoint())
			}
			wantRows(t, "after the fixed batch", query(t, path, `SELECT id, name FROM "Airport" ORDER BY id`), "A|renamed", "B|b", "C|c")
		})
	}
}

// TestRemovedWithoutEntityOrIDIsRejected: entity.removed without entity
// or id fails like entity.persisted does (ErrProjection wrapping
// ErrMalformedPayload): no hk_entity_state row for an empty key is
// written and the checkpoint does not move.
func TestRemovedWithoutEntityOrIDIsRejected(t *testing.T) {
	cases := map[string]events.Payload{
		"without id":          events.EntityRemoved{Entity: "Airport"},
		"without entity":      events.EntityRemoved{ID: "A"},
		"recorded without id": events.Recorded{Type: events.TypeEntityRemoved, Schema: 1, Fields: map[string]any{"entity": "Airport"}},
	}
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := openFresh(t)
			bad := newHistory().next("entity/Airport/", payload)
			err := p.Apply([]events.Event{bad})
			if !errors.Is(err, projector.ErrProjection) || !errors.Is(err, events.ErrMalformedPayload) || p.Checkpoint() != 0 {
				t.Fatalf("%s %s: err %v, checkpoint %d", events.TypeEntityRemoved, name, err, p.Checkpoint())
			}
			wantRows(t, "entity state rows", query(t, p.Path(), `SELECT entity, id, removed FROM hk_entity_state`))
		})
	}
}

// TestApplyEventWithoutProjectionFails: an event the projector has no
// case for — a type outside the catalogue, recorded or as a Go payload,
// or a catalogue type at a schema newer than this build's — is never
// skipped: Apply fails with ErrProjection wrapping ErrUnknownEventType,
// nothing of its batch is applied, and the checkpoint stays, in memory
// and on disk.
func TestApplyEventWithoutProjectionFails(t *testing.T) {
	cases := map[string]events.Payload{
		"recorded unknown type":             events.Recorded{Type: "test.unknown_type", Schema: 1, Fields: map[string]any{"anything": "goes"}},
		"recorded without fields":           events.Recorded{Type: "test.another_unknown", Schema: 7},
		"payload outside the catalogue":     foreignPayload{Note: "x"},
		"payload claiming a catalogue type": impostorPayload{Entity: "Airport", ID: "A"},
		"catalogue type at a newer schema": events.Recorded{Type: events.TypeEntityRemoved, Schema: 2,
			Fields: map[string]any{"entity": "Airport", "id": "A"}},
	}
	for name, payload := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), projector.FileName)
			p := openAt(t, path)
			h := newHistory()
			must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1)}))
			before := dump(t, path)

			good := h.created("Airport", "B", map[string]any{"name": "b"}, 1)
			unknown := h.next("misc/1", payload)
			err := p.Apply([]events.Event{good, unknown})
			if !errors.Is(err, events.ErrUnknownEventType) || !errors.Is(err, projector.ErrProjection) {
				t.Fatalf("Apply with %s: %v", name, err)
			}
			if p.Checkpoint() != 1 || !bytes.Equal(dump(t, path), before) {
				t.Fatalf("failed batch left checkpoint %d and:\n%s", p.Checkpoint(), dump(t, path))
			}
			must(t, p.Close())
			p = openAt(t, path)
			defer p.Close()
			if p.Checkpoint() != 1 {
				t.Fatalf("checkpoint on disk %d after a failed batch", p.Checkpoint())
			}
		})
	}
}

// foreignPayload implements events.Payload but is not in the catalogue.
type foreignPayload struct{ Note string }

func (foreignPayload) EventType() events.Type { return "test.foreign" }

// impostorPayload claims a catalogue type without being its Go type.
type impostorPayload struct{ Entity, ID string }

func (impostorPayload) EventType() events.Type { return events.TypeEntityRemoved }

// TestFieldStateViewHasOneRowPerField: hk_field_state flattens the JSON
// field state into one row per (entity, id, field) with hash, revision
// and owner; a removed entity keeps its rows with empty hashes.
func TestFieldStateViewHasOneRowPerField(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	must(t, p.Apply([]events.Event{
		h.created("Airport", "A", goroka(), 1),
		h.created("Airport", "B", map[string]any{"name": "b", "notes": "n"}, 1),
		h.persisted("Airport", "A", false, map[string]any{"notes": "edited"}, map[string]uint64{"notes": 2}),
	}))
	nameHash, err := events.Hash("Goroka Airport")
	must(t, err)
	wantRows(t, "rows per entity", query(t, p.Path(), `SELECT entity, id, count(*), count(DISTINCT field) FROM hk_field_state GROUP BY entity, id ORDER BY id`),
		"Airport|A|6|6", "Airport|B|2|2")
	wantRows(t, "A's fields", query(t, p.Path(), `SELECT field, revision, owner FROM hk_field_state WHERE id = 'A' ORDER BY field`),
		"active|1|system", "altitude|1|system", "checked|1|system", "latitude|1|system", "name|1|system", "notes|2|user")
	wantRows(t, "hash is the canonical hash", query(t, p.Path(), `SELECT value_hash FROM hk_field_state WHERE id = 'A' AND field = 'name'`), nameHash)

	must(t, p.Apply([]events.Event{h.removed("Airport", "A")}))
	wantRows(t, "removed A", query(t, p.Path(), `SELECT count(*), sum(value_hash = ''), min(revision), max(revision) FROM hk_field_state WHERE id = 'A'`),
		"6|6|1|2")

	wantRows(t, "removed A keeps the owner", query(t, p.Path(), `SELECT field, value_hash, revision, owner FROM hk_field_state WHERE id = 'A' AND field = 'notes'`),
		"notes||2|user")

	row, err := p.EntityState("Airport", "A")
	must(t, err)
	if row.Exists || row.Version != 3 || len(row.Fields) != 6 || row.Fields["notes"].Revision != 2 || row.Fields["notes"].Hash != "" {
		t.Fatalf("EntityState of removed A: %+v", row)
	}
	none, err := p.EntityState("Airport", "never")
	must(t, err)
	if none.Exists || none.Version != 0 || none.Fields == nil || len(none.Fields) != 0 {
		t.Fatalf("EntityState of a never-seen entity: %+v", none)
	}
}

// TestDigestAndDump: equal histories give equal digests in different
// files; one more event changes the digest; Dump renders each storage
// class distinctly (1, 1.0 and "1" differ).
func TestDigestAndDump(t *testing.T) {
	build := func(extra bool) string {
		p := openFresh(t)
		h := newHistory()
		evs := []events.Event{h.created("Airport", "A", map[string]any{"name": "1", "altitude": int64(1), "latitude": 1.0}, 1)}
		if extra {
			evs = append(evs, h.persisted("Airport", "A", false, map[string]any{"latitude": 1.5}, map[string]uint64{"latitude": 2}))
		}
		must(t, p.Apply(evs))
		return p.Path()
	}
	a, b, c := build(false), build(false), build(true)
	if digest(t, a) != digest(t, b) || digest(t, a) == digest(t, c) {
		t.Fatalf("digests: same history %s / %s, longer history %s", digest(t, a), digest(t, b), digest(t, c))
	}
	if !bytes.Contains(dump(t, a), []byte(`t:"A" | t:"1" | i:1 | f:1 | NULL | NULL | NULL`)) {
		t.Fatalf("dump does not render storage classes:\n%s", dump(t, a))
	}
	if _, err := projector.Digest(filepath.Join(t.TempDir(), "missing.sqlite")); !errors.Is(err, projector.ErrReadModelInvalid) {
		t.Fatalf("digest of a missing file: %v", err)
	}
}
