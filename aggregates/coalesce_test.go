package aggregates

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

// pendingTail is a queued effect of the System row of Airport LAX that was
// never claimed.
func pendingTail(op events.Op, values map[string]any) Effect {
	return Effect{ID: "fx1", Target: systemOnly.Target(sysTab, "LAX"), StreamSeq: 3, Op: op, Values: values,
		Entity: "Airport", EntityID: "LAX", State: EffectPending, Version: 0}
}

func sysQueue(op events.Op, values map[string]any) Queue {
	return Queue{Target: systemOnly.Target(sysTab, "LAX"), Op: op, Values: values, Entity: "Airport", ID: "LAX"}
}

func TestI32_AnAppendFollowedByUpdatesBecomesOneAppendOfTheMergedRow(t *testing.T) {
	tail := pendingTail(events.OpAppend, map[string]any{"code": "LAX", "name": "Los Angeles", "alt": int64(1)})
	d, ok, err := DecideCoalesce(tail, sysQueue(events.OpUpdate, map[string]any{"name": "LA"}), systemOnly, now)
	if err != nil || !ok {
		t.Fatalf("coalesce: %v, %v", ok, err)
	}
	if d.Stream != events.EffectStream("fx1") || d.ExpectedVersion != 0 || len(d.Events) != 1 {
		t.Fatalf("decision %+v, want one event on the effect's stream at its version", d)
	}
	p := d.Events[0].Payload.(events.EffectCoalesced)
	want := map[string]any{"code": "LAX", "name": "LA", "alt": int64(1)}
	if p.Op != events.OpAppend || !reflect.DeepEqual(p.Values, want) {
		t.Fatalf("merged %s %#v, want append %#v", p.Op, p.Values, want)
	}
	q, _, _ := DecideQueue(2, Queue{Target: tail.Target, Op: events.OpAppend, Values: want}, now)
	if p.PayloadHash != q.Events[0].Payload.(events.EffectQueued).PayloadHash {
		t.Fatal("the merged payload hash differs from the hash of the same write queued afresh")
	}
	if tail.Values["name"] != "Los Angeles" {
		t.Fatal("the decision changed its input")
	}
}

func TestI32_UpdatesMergeTheirChangedColumnsInOrder(t *testing.T) {
	tail := pendingTail(events.OpUpdate, map[string]any{"name": "A", "alt": int64(1)})
	w, ok := coalesce(tail, sysQueue(events.OpUpdate, map[string]any{"name": "B", "notes": "n"}), systemOnly)
	if want := map[string]any{"name": "B", "alt": int64(1), "notes": "n"}; !ok || w.Op != events.OpUpdate || !reflect.DeepEqual(w.Values, want) {
		t.Fatalf("merged %v %s %#v, want update %#v", ok, w.Op, w.Values, want)
	}
}

func TestI32_ADeleteAfterQueuedUpdatesSupersedesThem(t *testing.T) {
	w, ok := coalesce(pendingTail(events.OpUpdate, map[string]any{"name": "A"}), sysQueue(events.OpDelete, nil), systemOnly)
	if !ok || w.Op != events.OpDelete || w.Values != nil {
		t.Fatalf("merged %v %s %#v, want a delete", ok, w.Op, w.Values)
	}
}

func TestI32_PairsThatChangeTheRowsExistenceAreNeverMerged(t *testing.T) {
	for _, c := range []struct{ tail, next events.Op }{
		{events.OpAppend, events.OpDelete}, {events.OpDelete, events.OpAppend}, {events.OpDelete, events.OpUpdate},
		{events.OpAppend, events.OpAppend}, {events.OpUpdate, events.OpAppend}, {events.OpDelete, events.OpDelete},
	} {
		if _, ok := coalesce(pendingTail(c.tail, map[string]any{"name": "A"}), sysQueue(c.next, map[string]any{"name": "B"}), systemOnly); ok {
			t.Errorf("%s then %s merged", c.tail, c.next)
		}
	}
}

func TestI32_EvidenceIsNeverMergedAcrossAGuard(t *testing.T) {
	upd := map[string]any{"name": "B"}
	cases := map[string]struct {
		tail Effect
		q    Queue
	}{
		"a guarded tail (correction, reconcile)": {func() Effect { e := pendingTail(events.OpUpdate, upd); e.ExpectedHash = "h"; return e }(), sysQueue(events.OpUpdate, upd)},
		"a guarded change":                       {pendingTail(events.OpUpdate, upd), func() Queue { q := sysQueue(events.OpUpdate, upd); q.ExpectedHash = "h"; return q }()},
		"a claimed tail":                         {func() Effect { e := pendingTail(events.OpUpdate, upd); e.State = EffectProcessing; return e }(), sysQueue(events.OpUpdate, upd)},
		"a tail back on the retry path":          {func() Effect { e := pendingTail(events.OpUpdate, upd); e.State = EffectFailed; return e }(), sysQueue(events.OpUpdate, upd)},
		"a tail claimed before (attempts)":       {func() Effect { e := pendingTail(events.OpUpdate, upd); e.Attempts = 1; return e }(), sysQueue(events.OpUpdate, upd)},
		"an uncertain tail":                      {func() Effect { e := pendingTail(events.OpUpdate, upd); e.State = EffectUncertain; return e }(), sysQueue(events.OpUpdate, upd)},
		"another row": {pendingTail(events.OpUpdate, upd), func() Queue {
			q := sysQueue(events.OpUpdate, upd)
			q.Target = systemOnly.Target(sysTab, "SFO")
			return q
		}()},
		"an Input row": {func() Effect {
			e := pendingTail(events.OpUpdate, upd)
			e.Target = sheetWithInput.Target(inTab, "LAX")
			return e
		}(),
			func() Queue {
				q := sysQueue(events.OpUpdate, upd)
				q.Target = sheetWithInput.Target(inTab, "LAX")
				return q
			}()},
		"a Sync_Conflicts row": {func() Effect {
			e := pendingTail(events.OpUpdate, upd)
			e.Target = systemOnly.Target(conflictsTab, "c1")
			return e
		}(),
			func() Queue {
				q := sysQueue(events.OpUpdate, upd)
				q.Target = systemOnly.Target(conflictsTab, "c1")
				return q
			}()},
	}
	for name, c := range cases {
		if _, ok, err := DecideCoalesce(c.tail, c.q, sheetWithInput, now); ok || err != nil {
			t.Errorf("%s: merged (%v)", name, err)
		}
	}
}

// TestI32_TheRowEndsInItsNewestDesiredState replays random histories of
// one entity (create, updates, delete, create again) and compares the row
// a sheet shows after every effect queued one by one with the row it
// shows after the coalesced effects; the coalesced queue keeps the
// effects' order (only the tail ever changes).
func TestI32_TheRowEndsInItsNewestDesiredState(t *testing.T) {
	r := rand.New(rand.NewPCG(32, 1))
	for run := 0; run < 500; run++ {
		var plain []Queue
		var merged []Effect
		exists := false
		for step := 0; step < 1+r.IntN(30); step++ {
			q := randomChange(r, &exists)
			plain = append(plain, q)
			merged = queueCoalesced(t, merged, q)
		}
		want, got := showRow(plain), showMerged(merged)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("run %d: one by one the row shows %#v, coalesced %#v", run, want, got)
		}
		if len(merged) > len(plain) {
			t.Fatalf("run %d: %d effects coalesced from %d", run, len(merged), len(plain))
		}
	}
}

func randomChange(r *rand.Rand, exists *bool) Queue {
	switch {
	case !*exists:
		*exists = true
		return sysQueue(events.OpAppend, map[string]any{"code": "LAX", "name": r.IntN(5), "notes": r.IntN(5), "alt": r.IntN(5)})
	case r.IntN(8) == 0:
		*exists = false
		return sysQueue(events.OpDelete, nil)
	}
	v := map[string]any{}
	for _, col := range []string{"name", "notes", "alt"} {
		if r.IntN(2) == 0 {
			v[col] = int64(r.IntN(100))
		}
	}
	return sysQueue(events.OpUpdate, v)
}

func queueCoalesced(t *testing.T, fx []Effect, q Queue) []Effect {
	t.Helper()
	if n := len(fx); n > 0 {
		if w, ok := coalesce(fx[n-1], q, systemOnly); ok {
			fx[n-1].Op, fx[n-1].Values = w.Op, w.Values
			return fx
		}
	}
	e := pendingTail(q.Op, q.Values)
	e.StreamSeq = uint64(len(fx) + 1)
	return append(fx, e)
}

func showRow(qs []Queue) map[string]any {
	var row map[string]any
	for _, q := range qs {
		row = applyOp(row, q.Op, q.Values)
	}
	return row
}

func showMerged(fx []Effect) map[string]any {
	var row map[string]any
	for _, e := range fx {
		row = applyOp(row, e.Op, e.Values)
	}
	return row
}

func applyOp(row map[string]any, op events.Op, v map[string]any) map[string]any {
	switch op {
	case events.OpAppend:
		row = map[string]any{}
	case events.OpDelete:
		return nil
	}
	for k, x := range v {
		row[k] = x
	}
	return row
}
