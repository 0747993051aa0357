package projector_test

import (
	"bytes"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// buildOf applies batches to a read model opened with Options.Build (the
// bulk path of a rebuild), closes it with CloseBuilt and returns its dump.
func buildOf(t *testing.T, batches [][]events.Event) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), projector.FileName)
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}, Build: true})
	must(t, err)
	for _, b := range batches {
		must(t, p.Apply(b))
	}
	must(t, p.CloseBuilt())
	return dump(t, path)
}

// liveOf applies the same batches to a read model opened without Build
// (the per-event path) and returns its dump.
func liveOf(t *testing.T, batches [][]events.Event) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), projector.FileName)
	p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}})
	must(t, err)
	defer p.Close()
	for _, b := range batches {
		must(t, p.Apply(b))
	}
	return dump(t, path)
}

// bulkHistory has more full-row creates than one multi-row statement
// holds, of two entities, interleaved with what the bulk path does not
// take and what reads the rows it holds back: an update and a removal of
// a create still waiting in the same batch, a create missing a field, a
// value of the wrong kind, a re-create after a removal, lease events.
func bulkHistory() [][]events.Event {
	h := newHistory()
	var first, second []events.Event
	for i := range 150 {
		id := "A" + strconv.Itoa(i)
		a := goroka()
		a["name"], a["altitude"] = "Airport "+id, int64(i)
		first = append(first, h.created("Airport", id, a, 1))
		if i%7 == 0 {
			first = append(first, h.created("Runway", "R"+strconv.Itoa(i), map[string]any{"surface": "grass"}, 1))
		}
		switch i {
		case 10:
			first = append(first, h.persisted("Airport", "A3", false, map[string]any{"notes": "edited"}, map[string]uint64{"notes": 2}))
		case 20:
			first = append(first, h.removed("Airport", "A5"), h.created("Airport", "A5", goroka(), 2))
		case 30:
			first = append(first, h.created("Airport", "short", map[string]any{"name": "no altitude"}, 1))
		case 40:
			odd := goroka()
			odd["altitude"] = "not an int"
			first = append(first, h.created("Airport", "odd", odd, 1))
		case 90:
			first = append(first, h.lease(1, events.LeaseReleased{State: events.LeaseStateReleased, WriterID: "w1", Epoch: 1}))
		}
	}
	for i := range 70 {
		second = append(second, h.created("Airport", "B"+strconv.Itoa(i), goroka(), 1))
	}
	second = append(second, h.persisted("Airport", "B69", false, map[string]any{"altitude": int64(7)}, map[string]uint64{"altitude": 2}))
	return [][]events.Event{first, second}
}

// TestBuildEqualsLive: a read model built through the bulk path
// (Options.Build) dumps byte for byte as the same events applied one
// statement per row — for the golden histories and for a history of
// more creates than one multi-row statement holds, mixed with events
// that read what the bulk load still holds.
func TestBuildEqualsLive(t *testing.T) {
	cases := map[string][][]events.Event{"bulk": bulkHistory()}
	for name, build := range goldenCases {
		cases[name] = build(newHistory())
	}
	for name, batches := range cases {
		t.Run(name, func(t *testing.T) {
			built, live := buildOf(t, batches), liveOf(t, batches)
			if !bytes.Equal(built, live) {
				t.Fatalf("built:\n%s\nlive:\n%s", built, live)
			}
		})
	}
}

// TestBuildEqualsLiveMasked: with a mask (erased personal values replaced
// before projection, as the engine's keystore does) the bulk path writes
// the masked values and digests the per-event path writes.
func TestBuildEqualsLiveMasked(t *testing.T) {
	mask := func(entity, id string, fields map[string]any) map[string]any {
		if entity != "Airport" || len(id) < 2 || id[1] != '1' {
			return fields
		}
		out := make(map[string]any, len(fields))
		for k, v := range fields {
			out[k] = v
		}
		if _, ok := out["name"]; ok {
			out["name"] = "[erased]"
		}
		return out
	}
	opts := func(build bool) projector.Options {
		return projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}, Build: build, Mask: mask}
	}
	var dumps [2][]byte
	for i, build := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), projector.FileName)
		p, err := projector.Open(path, opts(build))
		must(t, err)
		for _, b := range bulkHistory() {
			must(t, p.Apply(b))
		}
		if build {
			must(t, p.CloseBuilt())
		} else {
			must(t, p.Close())
		}
		dumps[i] = dump(t, path)
	}
	if !bytes.Equal(dumps[0], dumps[1]) {
		t.Fatalf("built:\n%s\nlive:\n%s", dumps[0], dumps[1])
	}
	if !bytes.Contains(dumps[0], []byte("[erased]")) {
		t.Fatal("the mask was not applied")
	}
}

// TestBuildClosedTwiceDoesNotPanic: a building read model closed by
// CloseBuilt and then by Close (a deferred Close after a successful
// build), or by Close twice, returns without a panic (the background
// sync is stopped once).
func TestBuildClosedTwiceDoesNotPanic(t *testing.T) {
	for _, name := range []string{"built then closed", "closed twice"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), projector.FileName)
			p, err := projector.Open(path, projector.Options{StoreID: storeID, Entities: []events.EntityShape{airportShape(), runwayShape()}, Build: true})
			must(t, err)
			must(t, p.Apply(bulkHistory()[0]))
			if name == "built then closed" {
				must(t, p.CloseBuilt())
			} else {
				must(t, p.Close())
			}
			_ = p.Close() // the connection's second close may report an error; it must not panic
		})
	}
}
