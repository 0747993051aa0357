package aggregates

import (
	"time"

	"github.com/hikoutei/hikoutei-go/events"
)

// Decided is a single-stream decision about one effect.
type Decided struct {
	Effect   Effect
	Decision Decision
}

// batchKey groups the items of one batch event: the spreadsheet (its
// dispatch stream), the event type, the claim token and how it was
// learned, and which MaxBatchItems of them (part).
type batchKey struct {
	spreadsheet string
	typ         events.Type
	token, via  string
	epoch       int64
	part        int
}

// MaxBatchItems bounds the effects one batch event lists: a dispatch
// settling more appends several, each of at most this many. A record of
// 256 packed items (about 2.8 KB claimed, 5.6 KB applied) takes a page or
// two of log.db; one of a whole 10,000-effect pass (110 and 220 KB) is a
// run of overflow pages that bbolt copies whole to a new run each time a
// later append touches its leaf, which left log.db hundreds of pages
// larger than its records.
const MaxBatchItems = 256

// Batched settles a dispatch compactly: every decision that is one
// effect.claimed, or one effect.applied, becomes an item of one
// effect.batch_claimed or effect.batch_applied per spreadsheet, claim
// token and via (one per MaxBatchItems of them), on the spreadsheet's
// dispatch stream at the version
// version reports; the unit still checks each such effect's own stream at
// the version the decision read (an append without events), so a
// concurrent transition of the effect conflicts as before. Every other
// decision is added as it is. The log keeps the same facts: Each of a
// batch event gives back the per-effect payloads.
func Batched(items []Decided, version func(stream string) (uint64, error), now time.Time) (Changes, error) {
	var ch Changes
	groups := map[batchKey]*events.Event{}
	var order []batchKey
	seen := map[string]int{}
	for _, it := range items {
		seen[it.Effect.ID]++
	}
	listed := map[batchKey]int{} // items so far by key of part 0
	for _, it := range items {
		k, ok := batchable(it)
		if !ok || seen[it.Effect.ID] > 1 { // an effect decided twice keeps its own events, in order
			ch.AddDecision(it.Decision)
			continue
		}
		ch.Add(it.Decision.Stream, it.Decision.ExpectedVersion)
		n := listed[k]
		listed[k]++
		k.part = n / MaxBatchItems
		ev := groups[k]
		if ev == nil {
			ev = &events.Event{}
			groups[k] = ev
			order = append(order, k)
		}
		addItem(ev, it.Decision.Events[0].Payload)
	}
	return ch, addGroups(&ch, groups, order, version, now)
}

// batchable reports whether it can be an item of a batch event, and of which.
func batchable(it Decided) (batchKey, bool) {
	d := it.Decision
	if len(d.Events) != 1 || d.ExpectedVersion == events.AnyVersion {
		return batchKey{}, false
	}
	k := batchKey{spreadsheet: it.Effect.Target.Spreadsheet}
	switch x := d.Events[0].Payload.(type) {
	case events.EffectClaimed:
		k.typ, k.token, k.epoch = events.TypeEffectsClaimed, x.ClaimToken, x.Epoch
	case events.EffectApplied:
		k.typ, k.token, k.via = events.TypeEffectsApplied, x.ClaimToken, x.Via
	default:
		return batchKey{}, false
	}
	return k, k.token != ""
}

// addItem adds one per-effect payload to the batch event ev.
func addItem(ev *events.Event, p events.Payload) {
	switch x := p.(type) {
	case events.EffectClaimed:
		b, _ := ev.Payload.(events.EffectsClaimed)
		if b.Attempts == nil {
			b = events.EffectsClaimed{ClaimToken: x.ClaimToken, Epoch: x.Epoch, Attempts: map[string]int64{}}
		}
		b.Attempts[x.EffectID] = x.Attempt
		ev.Payload = b
	case events.EffectApplied:
		b, _ := ev.Payload.(events.EffectsApplied)
		if b.Written == nil {
			b = events.EffectsApplied{ClaimToken: x.ClaimToken, Via: x.Via, Written: map[string]string{}}
		}
		b.Written[x.EffectID] = x.WrittenHash
		ev.Payload = b
	}
}

// addGroups appends the batch events to their dispatch streams.
func addGroups(ch *Changes, groups map[batchKey]*events.Event, order []batchKey, version func(string) (uint64, error), now time.Time) error {
	read := map[string]bool{}
	for _, k := range order {
		stream := events.DispatchStream(k.spreadsheet)
		v := events.AnyVersion
		if !read[stream] {
			var err error
			if v, err = version(stream); err != nil {
				return err
			}
			read[stream] = true
		}
		ch.Add(stream, v, events.New(stream, groups[k].Payload, now))
	}
	return nil
}
