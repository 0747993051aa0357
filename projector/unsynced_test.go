package projector_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
	"github.com/hikoutei/hikoutei-go/projector"
)

// unsyncedTabs are the row tabs of the tests' Airport on spreadsheet "s".
func unsyncedTabs(entity string) []string {
	if entity == "Airport" {
		return []string{"Airport_System", "Airport_Input"}
	}
	return nil
}

// told is the effect.queued that tells spreadsheet "s" about row id of tab.
func (h *history) told(tab, id string) events.Event {
	b := tab + "/" + id
	return h.next(events.OutboxStream(b), events.EffectQueued{EffectID: "fx-" + b + "#" + fmt.Sprint(h.seq), Spreadsheet: "s", Tab: tab,
		Anchor: id, Binding: b, StreamSequence: 1, Op: events.OpAppend, Values: map[string]any{"name": id},
		PayloadHash: "h", Entity: "Airport", ID: id})
}

// tellAll queues a row for each of refs, as reconciliation does.
func tellAll(t *testing.T, p *projector.Projector, h *history, refs []projector.EntityRef) {
	t.Helper()
	var evs []events.Event
	for _, r := range refs {
		evs = append(evs, h.told(r.Tab, r.ID))
	}
	must(t, p.Apply(evs))
}

// wantSameSearch asserts that the search since seq finds exactly what a
// full search finds, in the same order, for every max in maxes.
func wantSameSearch(t *testing.T, p *projector.Projector, seq uint64, want []string, maxes ...int) {
	t.Helper()
	for _, max := range maxes {
		full, err := p.Unsynced("s", max, unsyncedTabs)
		must(t, err)
		since, ok, err := p.UnsyncedAfter("s", seq, max, unsyncedTabs)
		must(t, err)
		if !ok {
			t.Fatalf("max %d: the search since %d is not possible, want it to read the entities written since", max, seq)
		}
		if !slices.Equal(full, since) {
			t.Fatalf("max %d: the search since %d found %v, a full search %v", max, seq, since, full)
		}
		if max >= len(want) && !slices.Equal(refNames(full), want) {
			t.Fatalf("max %d: found %v, want %v", max, refNames(full), want)
		}
	}
}

func refNames(refs []projector.EntityRef) []string {
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Tab+"/"+r.ID)
	}
	return out
}

// TestUnsyncedAfterFindsWhatAFullSearchFinds: once every entity was told
// about at a checkpoint, the search that reads only the entities written
// since finds the same rows, in the same order, as the search of every
// entity: new entities, an entity told about on one row tab only, a
// revived one; not a removed one, nor one only updated.
func TestUnsyncedAfterFindsWhatAFullSearchFinds(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	var evs []events.Event
	for i := range 10 {
		evs = append(evs, h.created("Airport", fmt.Sprint(i), map[string]any{"name": "a"}, 1))
	}
	must(t, p.Apply(evs))
	refs, err := p.Unsynced("s", 100, unsyncedTabs)
	must(t, err)
	if len(refs) != 20 {
		t.Fatalf("a store never told found %d rows, want 10 entities × 2 tabs", len(refs))
	}
	tellAll(t, p, h, refs)
	at := p.Checkpoint()
	wantSameSearch(t, p, at, nil, 100)
	must(t, p.Apply([]events.Event{
		h.created("Airport", "new1", map[string]any{"name": "b"}, 1),
		h.persisted("Airport", "3", false, map[string]any{"name": "c"}, map[string]uint64{"name": 2}), // an update: told before
		h.removed("Airport", "7"),
		h.created("Airport", "new2", map[string]any{"name": "d"}, 1),
		h.removed("Airport", "5"),
		h.created("Airport", "5", map[string]any{"name": "e"}, 3), // revived: its rows were told about
		h.removed("Airport", "new2"),
		h.created("Airport", "new3", map[string]any{"name": "f"}, 1),
		h.told("Airport_System", "new3"), // queued on one row tab only
	}))
	want := []string{"Airport_System/new1", "Airport_Input/new1", "Airport_Input/new3"}
	wantSameSearch(t, p, at, want, 100, 3, 2, 1)
	refs, _, err = p.UnsyncedAfter("s", at, 100, unsyncedTabs)
	must(t, err)
	tellAll(t, p, h, refs)
	wantSameSearch(t, p, at, nil, 100)
}

// TestUnsyncedAfterNeedsAFullSearchWhenWhatCountsAsToldMoves: a switch of
// target, a tab's move, and a read model opened again each make the
// search since an earlier checkpoint impossible (every entity may need
// its rows again); the full search then finds them.
func TestUnsyncedAfterNeedsAFullSearchWhenWhatCountsAsToldMoves(t *testing.T) {
	for name, ev := range map[string]events.Payload{
		"switch": events.SyncTargetBound{Target: "s", Previous: "old"},
		"move":   events.SyncTabRouted{Tab: "Airport_Input", Target: "s", Previous: "old"},
	} {
		t.Run(name, func(t *testing.T) {
			p := openFresh(t)
			h := newHistory()
			must(t, p.Apply([]events.Event{h.created("Airport", "1", map[string]any{"name": "a"}, 1)}))
			refs, err := p.Unsynced("s", 100, unsyncedTabs)
			must(t, err)
			tellAll(t, p, h, refs)
			at := p.Checkpoint()
			must(t, p.Apply([]events.Event{h.next("sync/target", ev)}))
			if _, ok, err := p.UnsyncedAfter("s", at, 100, unsyncedTabs); err != nil || ok {
				t.Fatalf("search since %d after a %s: ok %v, %v; want a full search", at, name, ok, err)
			}
			full, err := p.Unsynced("s", 100, unsyncedTabs)
			must(t, err)
			if len(full) == 0 {
				t.Fatalf("after a %s the full search found nothing", name)
			}
		})
	}
	path := filepath.Join(t.TempDir(), projector.FileName)
	p := openAt(t, path)
	h := newHistory()
	must(t, p.Apply([]events.Event{h.created("Airport", "1", map[string]any{"name": "a"}, 1)}))
	before := p.Checkpoint() - 1
	must(t, p.Close())
	p = openAt(t, path)
	defer p.Close()
	if _, ok, err := p.UnsyncedAfter("s", before, 100, unsyncedTabs); err != nil || ok {
		t.Fatalf("a read model opened again searched since %d (before it opened): ok %v, %v", before, ok, err)
	}
	if refs, ok, err := p.UnsyncedAfter("s", p.Checkpoint(), 100, unsyncedTabs); err != nil || !ok || len(refs) != 0 {
		t.Fatalf("a read model opened again searched since its checkpoint: %v, ok %v, %v", refs, ok, err)
	}
}

// TestUnsyncedOfSearchesThePrimaryKey: the search since a checkpoint finds
// each listed entity by a search of hk_entity_state's key, never a scan
// of every entity (the full search's cost, which grows with the store).
func TestUnsyncedOfSearchesThePrimaryKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), projector.FileName)
	must(t, openAt(t, path).Close())
	q := strings.NewReplacer("?1", "'Airport'", "?2", "'s'", "?3", "'Airport_System'", "?4", "0", "?5", "10",
		"?6", `'["1","2"]'`).Replace(projector.UnsyncedOfQuery)
	plan := strings.Join(query(t, path, "EXPLAIN QUERY PLAN "+q), "\n")
	if !strings.Contains(plan, "SEARCH e USING PRIMARY KEY") || strings.Contains(plan, "SCAN e") || strings.Contains(plan, "SCAN o") {
		t.Errorf("%s\nplan:\n%s\nwant a search of hk_entity_state's key per listed id, no scan", q, plan)
	}
}

// TestUnsyncedAfterAgreesWithAFullSearchOverARandomHistory drives a seeded
// random history as reconciliation meets it — creates, updates, removals,
// revivals, rows queued on one tab only, switches of target, tab moves,
// read models opened again — and searches as the engine does: since the
// last complete search when the projector still lists what was written
// since, else in full. Every search since a mark must find exactly what a
// full search finds, and once the history stops, every existing entity
// has each of its rows queued exactly once since the last switch.
func TestUnsyncedAfterAgreesWithAFullSearchOverARandomHistory(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 19))
			path := filepath.Join(t.TempDir(), projector.FileName)
			p := openAt(t, path)
			defer func() { p.Close() }()
			h := newHistory()
			exists := map[string]bool{}
			marked, at := false, uint64(0)
			search := func(max int) {
				since := false // the engine's search since its mark: an incomplete one keeps the mark
				if marked {
					refs, ok, err := p.UnsyncedAfter("s", at, max, unsyncedTabs)
					must(t, err)
					if ok {
						full, err := p.Unsynced("s", max, unsyncedTabs)
						must(t, err)
						if !slices.Equal(refs, full) {
							t.Fatalf("since %d (max %d): %v; a full search: %v", at, max, refNames(refs), refNames(full))
						}
						since = true
					} else {
						marked = false
					}
				}
				cp := p.Checkpoint()
				refs, err := p.Unsynced("s", max, unsyncedTabs)
				must(t, err)
				tellAll(t, p, h, refs)
				if len(refs) < max {
					marked, at = true, cp
				} else if !since {
					marked = false
				}
			}
			for step := range 300 {
				var evs []events.Event
				for range 1 + rng.IntN(8) {
					id := fmt.Sprint(rng.IntN(40))
					switch r := rng.IntN(10); {
					case r < 5:
						evs = append(evs, h.created("Airport", id, map[string]any{"name": fmt.Sprint(step)}, uint64(step+1)))
						exists[id] = true
					case r < 7 && exists[id]:
						evs = append(evs, h.removed("Airport", id))
						exists[id] = false
					case r < 8:
						evs = append(evs, h.told("Airport_System", id))
					case r < 9 && rng.IntN(8) == 0:
						evs = append(evs, h.next("sync/target", events.SyncTabRouted{Tab: "Airport_Input", Target: "s", Previous: "old"}))
					case rng.IntN(10) == 0:
						evs = append(evs, h.next("sync/target", events.SyncTargetBound{Target: "s", Previous: "old"}))
					}
				}
				must(t, p.Apply(evs))
				if rng.IntN(25) == 0 {
					must(t, p.Close())
					p = openAt(t, path)
				}
				if rng.IntN(3) == 0 {
					search(1 + rng.IntN(30))
				}
			}
			for range 100 {
				search(1000)
				if marked {
					break
				}
			}
			refs, err := p.Unsynced("s", 1000, unsyncedTabs)
			must(t, err)
			if len(refs) != 0 {
				t.Fatalf("after the last search %d rows are still never told: %v", len(refs), refNames(refs))
			}
		})
	}
}
