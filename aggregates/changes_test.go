package aggregates

import (
	"reflect"
	"testing"

	"github.com/hikoutei/hikoutei-go/events"
)

func ev(stream, id string) events.Event {
	return events.New(stream, events.EffectSuperseded{EffectID: id}, now)
}

func TestChangesKeepFirstTouchStreamOrderAndTheFirstVersion(t *testing.T) {
	var c Changes
	if !c.Empty() || c.Count() != 0 {
		t.Fatal("zero Changes must be empty")
	}
	c.Add("b", 4, ev("b", "1"))
	c.Add("a", 0, ev("a", "2"))
	c.Add("b", 99, ev("b", "3"), ev("b", "4")) // the version read first stands
	c.AddDecision(Decision{Stream: "z", ExpectedVersion: 1})
	if got := streams(c); !reflect.DeepEqual(got, []string{"b", "a"}) {
		t.Fatalf("streams %v: first-touch order, no append for a decision without events", got)
	}
	if c.Appends[0].ExpectedVersion != 4 || len(c.Appends[0].Events) != 3 || c.Count() != 4 || c.Empty() {
		t.Fatalf("changes %+v", c)
	}
	var ids []string
	for _, e := range c.Appends[0].Events {
		ids = append(ids, e.Payload.(events.EffectSuperseded).EffectID)
	}
	if !reflect.DeepEqual(ids, []string{"1", "3", "4"}) {
		t.Fatalf("events of b in order %v", ids)
	}
	c.AddDecision(Decision{Stream: "c", ExpectedVersion: 2, Events: []events.Event{ev("c", "5")}})
	if last := c.Appends[len(c.Appends)-1]; last.Stream != "c" || last.ExpectedVersion != 2 {
		t.Fatalf("decision append %+v", last)
	}
	queued := Changes{Queue: []Queue{{Op: events.OpDelete}}}
	if queued.Empty() || queued.Count() != 0 {
		t.Fatal("a queued effect makes Changes non-empty and is not an event")
	}
}

func TestChangesMergeAppendsAfterAndJoinsSharedStreams(t *testing.T) {
	var c Changes
	c.Add("a", 1, ev("a", "1"))
	c.Queue = []Queue{{ID: "q1"}}
	var o Changes
	o.Add("b", 2, ev("b", "2"))
	o.Add("a", 7, ev("a", "3"))
	o.Queue = []Queue{{ID: "q2"}}
	c.Merge(o)
	if got := streams(c); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("streams %v", got)
	}
	if a := c.Appends[0]; a.ExpectedVersion != 1 || len(a.Events) != 2 || a.Events[1].Payload.(events.EffectSuperseded).EffectID != "3" {
		t.Fatalf("shared stream %+v", a)
	}
	if c.Appends[1].ExpectedVersion != 2 || len(c.Queue) != 2 || c.Queue[0].ID != "q1" || c.Queue[1].ID != "q2" || c.Count() != 3 {
		t.Fatalf("merged %+v", c)
	}
	// Adding to c after a merge keeps using the merged index.
	c.Add("b", 0, ev("b", "4"))
	if len(c.Appends) != 2 || len(c.Appends[1].Events) != 2 {
		t.Fatalf("after merge %+v", c)
	}
	if len(o.Appends[0].Events) != 1 {
		t.Fatal("Merge modified its argument")
	}
}
