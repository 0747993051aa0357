package aggregates

import "github.com/hikoutei/hikoutei-go/events"

// Changes is what a multi-stream decision produces for one fenced commit:
// events by stream, each stream at the version the decision was taken
// against (streams in first-touch order), and the effects to queue. The
// engine queues each effect with DecideQueue at its row's outbox version,
// read just before (the effect id and stream_sequence follow from it), and
// appends everything as one unit.
type Changes struct {
	Appends []events.StreamAppend
	Queue   []Queue
	index   map[string]int // stream → position in Appends
}

// Add appends evs to stream; version is the stream's version the decision
// read, used when the stream is new to c.
func (c *Changes) Add(stream string, version uint64, evs ...events.Event) {
	if i, ok := c.index[stream]; ok {
		c.Appends[i].Events = append(c.Appends[i].Events, evs...)
		return
	}
	if c.index == nil {
		c.index = map[string]int{}
	}
	c.index[stream] = len(c.Appends)
	c.Appends = append(c.Appends, events.StreamAppend{Stream: stream, ExpectedVersion: version, Events: evs})
}

// AddDecision adds a single-stream decision's events.
func (c *Changes) AddDecision(d Decision) {
	if len(d.Events) > 0 {
		c.Add(d.Stream, d.ExpectedVersion, d.Events...)
	}
}

// Merge adds o's appends and effects after c's.
func (c *Changes) Merge(o Changes) {
	for _, a := range o.Appends {
		c.Add(a.Stream, a.ExpectedVersion, a.Events...)
	}
	c.Queue = append(c.Queue, o.Queue...)
}

// Empty reports whether c holds nothing to append or queue.
func (c Changes) Empty() bool { return len(c.Appends) == 0 && len(c.Queue) == 0 }

// Count is the number of events c appends (queued effects not included).
func (c Changes) Count() int {
	n := 0
	for _, a := range c.Appends {
		n += len(a.Events)
	}
	return n
}
