package projector_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// TestClaimableMergesPendingAndFailedInQueueOrder: the claimable heads are
// the pending effects and the recoverable failed ones that are due, in
// queue order across both states, at most max; a terminal failed effect,
// one not yet due, and one behind an unsettled effect of its row (I07)
// are not claimable.
func TestClaimableMergesPendingAndFailedInQueueOrder(t *testing.T) {
	p := openFresh(t)
	h := newHistory()
	var evs []events.Event
	queue := func(id, anchor string, seq uint64) {
		evs = append(evs, h.next(events.OutboxStream("T/"+anchor), events.EffectQueued{EffectID: id, Spreadsheet: "s", Tab: "T",
			Anchor: anchor, Binding: "T/" + anchor, StreamSequence: seq, Op: events.OpAppend, Values: map[string]any{"name": id},
			PayloadHash: "h", Entity: "Airport", ID: anchor}))
	}
	fail := func(id string, terminal bool, retry time.Time) {
		evs = append(evs, h.next(events.EffectStream(id), events.EffectClaimed{EffectID: id, ClaimToken: "c", Attempt: 1}),
			h.next(events.EffectStream(id), events.EffectFailed{EffectID: id, ClaimToken: "c", Code: "x", Terminal: terminal, RetryAt: retry}))
	}
	for i, id := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		queue(id, id, 1)
		if i == 0 {
			queue("a2", "a", 2) // behind a: not claimable while a is unsettled
		}
	}
	fail("b", false, time.Time{})         // recoverable, due: claimable in its place
	fail("d", true, time.Time{})          // terminal: never claimable
	fail("e", false, t0.Add(time.Hour*9)) // not yet due
	fail("f", false, time.Time{})
	must(t, p.Apply(evs))
	now := t0.Add(time.Hour)
	for max, want := range map[int][]string{10: {"a", "b", "c", "f", "g"}, 3: {"a", "b", "c"}, 4: {"a", "b", "c", "f"}} {
		fx, err := p.Claimable("s", now, max)
		must(t, err)
		var got []string
		for _, f := range fx {
			got = append(got, f.ID)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Claimable(max %d) = %v, want %v", max, got, want)
		}
	}
}
