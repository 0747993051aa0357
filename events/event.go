package events

import "time"

// Event is one entry of the log: the envelope of ARCHITECTURE.md "Event
// envelope" plus its canonical payload.
//
// Seq, Version, Epoch, Token and Commit are stamped by the log at append time;
// callers fill Stream, Type, Schema, At and Payload.
type Event struct {
	Seq     uint64    // global sequence, dense from 1
	Stream  string    // e.g. "entity/Airport/LAX", "lease/writer"
	Version uint64    // per-stream version, dense from 1
	Type    string    // dotted, e.g. "entity.persisted"
	Schema  uint32    // payload schema version, for upcasting (0 is read as 1)
	At      time.Time // the clock reading the decision used (UTC, nanoseconds kept)
	Epoch   uint64    // writer epoch of the appending lease
	Token   string    // fencing token of the appending lease
	Commit  string    // id shared by all events of one append batch
	// Payload is a canonical map (see EncodeCanonical). Nil is stored as an
	// empty map.
	Payload map[string]any
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
