package events

// Integrity events: damage a store found in itself and recorded, so that
// it is never papered over. Stream "integrity".
const (
	TypeLogGapDetected Type = "integrity.log_gap_detected"
)

// IntegrityStream is the stream of integrity events.
const IntegrityStream = "integrity"

// LogGapDetected records that, when the store was opened, its read model
// had applied records past the log head: the log lost records it had
// acknowledged (a damaged page, an older copy of log.db restored). The
// sequences LogHead+1..ReadModelCheckpoint of that earlier history are
// gone from the log; the new records appended since reuse those numbers.
type LogGapDetected struct {
	// ReadModelCheckpoint is the last sequence the read model had applied.
	ReadModelCheckpoint uint64 `canon:"read_model_checkpoint"`
	// LogHead is the log head found, before anything was appended.
	LogHead uint64 `canon:"log_head"`
	// SetAside names the file the old read model was kept as (in the store
	// directory): the only trace of what the lost records changed.
	SetAside string `canon:"set_aside"`
}

// EventType implements Payload.
func (LogGapDetected) EventType() Type { return TypeLogGapDetected }

func init() {
	register[LogGapDetected](1, IntegrityStream)
}
