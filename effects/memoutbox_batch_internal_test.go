package effects

import (
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/aggregates"
	"github.com/hikoutei/hikoutei-go/events"
)

// The outbox fold treats a batch settle (effect.batch_claimed,
// effect.batch_applied on the dispatch stream) as its per-effect events:
// the effects end in the same state, with the same claim token, attempt,
// and visible row hash; only their own stream versions stay where they
// were, since the batch is not on their streams.
func TestOutboxFoldsABatchSettleAsItsPerEffectSettles(t *testing.T) {
	perEffect, batched := queuedPair(), queuedPair()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	seq := uint64(2)
	step := func(m *MemOutbox, stream string, version uint64, p events.Payload) {
		seq++
		m.fold(events.Event{Seq: seq, Stream: stream, Version: version, At: at, Commit: "c", Payload: p})
	}
	for _, id := range []string{"fx1", "fx2"} {
		step(perEffect, events.EffectStream(id), 1, events.EffectClaimed{EffectID: id, ClaimToken: "tok", Attempt: 1, Epoch: 2})
		step(perEffect, events.EffectStream(id), 2, events.EffectApplied{EffectID: id, ClaimToken: "tok", WrittenHash: "h" + id, Via: "dispatch"})
	}
	dispatch := events.DispatchStream("sheets")
	step(batched, dispatch, 1, events.EffectsClaimed{ClaimToken: "tok", Epoch: 2, Attempts: map[string]int64{"fx1": 1, "fx2": 1}})
	step(batched, dispatch, 2, events.EffectsApplied{ClaimToken: "tok", Via: "dispatch", Written: map[string]string{"fx1": "hfx1", "fx2": "hfx2"}})
	for _, id := range []string{"fx1", "fx2"} {
		a, b := *perEffect.fx[id], *batched.fx[id]
		if a.Version != 2 || b.Version != 0 {
			t.Fatalf("%s: versions %d (per effect) and %d (batch), want 2 and 0 (the batch is on the dispatch stream)", id, a.Version, b.Version)
		}
		a.Version = 0
		if !reflect.DeepEqual(a, b) || b.State != aggregates.EffectApplied || b.ClaimToken != "tok" || b.Attempts != 1 {
			t.Fatalf("%s: per effect %+v, batch %+v", id, a, b)
		}
	}
	if !reflect.DeepEqual(perEffect.visible, batched.visible) || batched.visible["b-fx1"] != "hfx1" {
		t.Fatalf("visible hashes: per effect %v, batch %v", perEffect.visible, batched.visible)
	}
}

// queuedPair is an outbox holding two queued effects, fx1 and fx2.
func queuedPair() *MemOutbox {
	m := NewMemOutbox(MemOutboxConfig{})
	for i, id := range []string{"fx1", "fx2"} {
		m.fold(events.Event{Seq: uint64(i + 1), Stream: events.OutboxStream("b-" + id), Version: 1, Payload: events.EffectQueued{
			EffectID: id, Spreadsheet: "sheets", Tab: "T_System", Anchor: id, Binding: "b-" + id, StreamSequence: 1, Op: events.OpAppend,
			Values: map[string]any{"id": id}, Entity: "T", ID: id}})
	}
	return m
}
