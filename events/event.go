package events

import "time"

// Event is one entry of the log: the envelope and its typed payload, one
// of the catalogue's types (docs/events.md).
//
// Seq, Version, Epoch, Token, Commit and Link are stamped by the log at append
// time; callers fill Stream, At and Payload (New does).
type Event struct {
	Seq     uint64    // global sequence, dense from 1
	Stream  string    // e.g. "entity/Airport/LAX", "lease/writer"
	Version uint64    // per-stream version, dense from 1
	At      time.Time // the clock reading the decision used (UTC, nanoseconds kept)
	Epoch   uint64    // writer epoch of the appending lease
	Token   string    // fencing token of the appending lease
	Commit  string    // id shared by all events of one append batch
	Payload Payload   // the typed body; its type is the event's type
	// Link is the hash chain value of the record before this one, which
	// the record carries (stamped by the log; zero for a record written
	// before the chain, by an older build). See ChainNext.
	Link ChainHash
}

// New returns an event of stream with payload p decided at at.
func New(stream string, p Payload, at time.Time) Event {
	return Event{Stream: stream, Payload: p, At: at}
}

// Type is the event's catalogue type ("" without a payload).
func (e Event) Type() Type {
	if e.Payload == nil {
		return ""
	}
	return e.Payload.EventType()
}

// AnyVersion disables the expected-version check for one stream in an append.
const AnyVersion = ^uint64(0)

// StreamAppend is the part of one append batch that targets one stream.
// ExpectedVersion is the stream's current version the caller decided against
// (0 = the stream must not exist yet; AnyVersion = no check).
type StreamAppend struct {
	Stream          string
	ExpectedVersion uint64
	Events          []Event
}
