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
			{h.persisted("Airport", "A", false, map[string]any{"altitude": int64(5283), "checked": nil}, map[string]int64{"altitude": 2, "checked": 2})},
			{h.persisted("Airport", "B", false, map[string]any{"checked": checked, "legacy": "not a column"}, map[string]int64{"checked": 2, "legacy": 1}),
				h.persisted("Airport", "A", false, map[string]any{"notes": "edited"}, map[string]int64{"notes": 2})},
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
			{h.persisted("Airport", "A", false, map[string]any{"altitude": int64(2)}, map[string]int64{"altitude": 3})},
		}
	},
	// Lease events: the current lease per role (host, pid and operation
	// kept when a later event does not carry them) and the full history,
	// a reconciliation included.
	"lease": func(h *history) [][]events.Event {
		acquired := func(typ string, epoch uint64, writer, host string, pid int64, op string) events.Event {
			return h.lease(typ, epoch, map[string]any{"state": "held", "writer_id": writer, "epoch": int64(epoch),
				"host": host, "pid": pid, "operation": op, "reason": "vacant", "previous_writer_id": "", "previous_epoch": int64(0),
				"lease_until": t0.Add(time.Hour)})
		}
		return [][]events.Event{
			{acquired("lease.acquired", 1, "w1", "host-a", 100, "serve")},
			{h.created("Airport", "A", map[string]any{"name": "x"}, 1)},
			{h.lease("lease.reconciled", 2, map[string]any{"state": "reconciled", "writer_id": "w1", "host": "host-a", "pid": int64(100),
				"operation": "serve", "acquired_at": t0, "by_writer_id": "w2"}),
				acquired("lease.taken_over", 2, "w2", "host-b", 200, "demo")},
			{h.lease("lease.released", 2, map[string]any{"state": "released", "writer_id": "w2", "epoch": int64(2)})},
		}
	},
	// Event types the projector does not know are skipped (the checkpoint
	// still moves past them); an entity the schema does not declare gets
	// canonical state but no table.
	"unknown_and_undeclared": func(h *history) [][]events.Event {
		return [][]events.Event{
			{h.next("misc/1", "test.unknown_type", 1, map[string]any{"anything": "goes"}),
				h.created("Runway", "1-09", map[string]any{"length_m": int64(1600), "surface": "asphalt"}, 1)},
			{h.persisted("Runway", "1-09", false, map[string]any{"surface": "grass"}, map[string]int64{"surface": 2}),
				h.next("misc/1", "test.another_unknown", 7, nil)},
			{h.removed("Runway", "1-09"), h.next("misc/2", "test.unknown_type", 1, map[string]any{})},
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
		h.persisted("Airport", "A", false, map[string]any{"altitude": int64(1)}, map[string]int64{"altitude": 2}),
		h.removed("Airport", "A"),
		h.created("Airport", "A", map[string]any{"name": "again"}, 2),
		h.persisted("Airport", "A", false, map[string]any{"altitude": int64(7)}, map[string]int64{"altitude": 4}),
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
	bad := map[string]map[string]any{
		"persisted without id":     {"entity": "Airport", "fields": map[string]any{"name": "x"}, "revisions": map[string]any{"name": int64(1)}, "created": true},
		"persisted without entity": {"id": "C", "fields": map[string]any{"name": "x"}, "revisions": map[string]any{"name": int64(1)}, "created": true},
		"persisted with int id":    {"entity": "Airport", "id": int64(3), "fields": map[string]any{}, "revisions": map[string]any{}, "created": true},
		"field without canonical form": {"entity": "Airport", "id": "C", "created": true,
			"fields": map[string]any{"name": []byte("raw")}, "revisions": map[string]any{"name": int64(1)}},
	}
	for name, payload := range bad {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), projector.FileName)
			p := openAt(t, path)
			h := newHistory()
			must(t, p.Apply([]events.Event{h.created("Airport", "A", goroka(), 1), h.created("Airport", "B", map[string]any{"name": "b"}, 1)}))
			before := dump(t, path)

			good := h.persisted("Airport", "A", false, map[string]any{"name": "renamed"}, map[string]int64{"name": 2})
			other := h.created("Airport", "C", map[string]any{"name": "c"}, 1)
			broken := h.next("entity/Airport/C", "entity.persisted", 2, payload)
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

// TestFieldStateViewHasOneRowPerField: hk_field_state flattens the JSON
// field state into one row per (entity, id, field) with hash, revision
// and owner; a removed entity keeps its rows with empty hashes.
func TestFieldStateViewHasOneRowPerField(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	must(t, p.Apply([]events.Event{
		h.created("Airport", "A", goroka(), 1),
		h.created("Airport", "B", map[string]any{"name": "b", "notes": "n"}, 1),
		h.persisted("Airport", "A", false, map[string]any{"notes": "edited"}, map[string]int64{"notes": 2}),
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

	row, err := p.EntityState("Airport", "A")
	must(t, err)
	if row.Exists || row.Version != 3 || len(row.Fields) != 6 || row.Fields["notes"].Revision != 2 || row.Fields["notes"].Hash != "" || row.Fields["notes"].Owner != projector.OwnerUser {
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
			evs = append(evs, h.persisted("Airport", "A", false, map[string]any{"latitude": 1.5}, map[string]int64{"latitude": 2}))
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
